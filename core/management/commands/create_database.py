"""Create the PostgreSQL database that DATABASE_URL names when it does not exist yet (`make run` runs it before the
migrations, so a fresh server needs no `createdb`). On SQLite the file is made by the first connection: nothing to do."""

from django.core.management.base import BaseCommand, CommandError
from django.db import connection


class Command(BaseCommand):
    help = "Create the configured PostgreSQL database if it does not exist (nothing to do on SQLite)."

    def handle(self, *args, **options):
        if connection.vendor != "postgresql":
            return
        import psycopg
        from psycopg import sql

        settings = connection.settings_dict
        name = settings["NAME"]
        params = {
            key: value
            for key, value in {
                "host": settings.get("HOST") or None,
                "port": settings.get("PORT") or None,
                "user": settings.get("USER") or None,
                "password": settings.get("PASSWORD") or None,
            }.items()
            if value
        }
        try:
            with psycopg.connect(dbname="postgres", autocommit=True, connect_timeout=10, **params) as server:
                if server.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                    return
                server.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except psycopg.Error as error:
            raise CommandError(
                f"could not reach PostgreSQL to make sure the database {name!r} exists: {error}".strip()
            ) from None
        self.stdout.write(f"created the PostgreSQL database {name!r}")
