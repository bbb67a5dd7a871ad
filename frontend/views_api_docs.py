"""The API documentation pages, Swagger UI (/api/docs/) and Redoc (/api/redoc/), served under the app's own CSP.

drf-spectacular's own templates load the viewers from a CDN, start Swagger UI with an inline script and Redoc with
web fonts from a font CDN; the CSP blocks all three and the app promises to load nothing from outside. These views
keep drf-spectacular's context but render templates of this app: the viewers come from drf-spectacular-sidecar's
static files (SWAGGER_UI_DIST / REDOC_DIST = "SIDECAR"), Swagger UI starts from a static script (src/api-docs.js)
and the fonts are the system's.
"""

from __future__ import annotations

from drf_spectacular.settings import spectacular_settings
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerView


class SwaggerDocsView(SpectacularSwaggerView):
    template_name = "api_docs/swagger_ui.html"

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        # the settings as data, for a JSON block the static script reads (the parent passes them as JS source)
        response.data["swagger_settings"] = spectacular_settings.SWAGGER_UI_SETTINGS
        return response


class RedocDocsView(SpectacularRedocView):
    template_name = "api_docs/redoc.html"
