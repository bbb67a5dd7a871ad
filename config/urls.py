from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from core.auth_api import token_view
from core.health import healthz, readyz
from frontend.views_api_docs import RedocDocsView, SwaggerDocsView

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("api/auth/token/", token_view, name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SwaggerDocsView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", RedocDocsView.as_view(url_name="api-schema"), name="api-redoc"),
    path("api/", include("core.jobs.urls")),
    path("api/", include("verifybench.api.urls")),
    path("api/", include("annotation.api.urls")),
    path("api/", include("grading.api.urls")),
    path("api/", include("reports.api.urls")),
    path("api/", include("webhooks.api.urls")),
    path("", include("frontend.urls")),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)

handler500 = "core.middleware.server_error"
