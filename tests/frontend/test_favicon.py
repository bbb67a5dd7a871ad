"""The browser asks for an icon on every page; it must find one (no 404 in the console)."""


def test_every_page_names_an_icon_the_app_serves(client):
    page = client.get("/login/")
    assert b'rel="icon"' in page.content and b"favicon.svg" in page.content
    legacy = client.get("/favicon.ico")
    assert legacy.status_code == 301 and legacy["Location"].endswith("favicon.svg")
