from rest_framework.routers import DefaultRouter

from .api import JobViewSet

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("jobs", JobViewSet, basename="job")

urlpatterns = router.urls
