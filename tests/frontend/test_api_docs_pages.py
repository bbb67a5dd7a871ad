"""The API docs pages through Django's test client: the viewers are the app's own files and no script is inline."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from .test_pages import assert_csp_clean

pytestmark = pytest.mark.django_db

EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["'](?:https?:)?//""", re.IGNORECASE)


@pytest.mark.parametrize(
    "name, viewer",
    [
        ("api-docs", "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"),
        ("api-redoc", "/static/drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"),
    ],
)
def test_docs_pages_load_their_viewer_from_the_app_with_no_inline_script(client, researcher, name, viewer):
    client.force_login(researcher)
    response = client.get(reverse(name))
    assert response.status_code == 200
    html = response.content.decode()
    assert f'src="{viewer}"' in html
    assert_csp_clean(html)
    assert not EXTERNAL.search(html), EXTERNAL.search(html)
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]


def test_swagger_ui_gets_its_settings_as_data_and_its_start_from_a_static_script(client, researcher):
    client.force_login(researcher)
    html = client.get(reverse("api-docs")).content.decode()
    assert '<script id="swagger-settings" type="application/json">' in html
    assert '"validatorUrl": null' in html  # no badge fetched from the public validator
    assert 'src="/static/dist/api-docs.js"' in html
    assert 'data-schema-url="/api/schema/"' in html


def test_the_docs_views_stay_out_of_the_schema(client):
    paths = client.get("/api/schema/?format=json").json()["paths"]
    assert not {"/api/docs/", "/api/redoc/", "/api/schema/"} & set(paths)
