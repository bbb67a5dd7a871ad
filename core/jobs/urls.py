from core.routers import NumericIdRouter

from .api import JobViewSet

router = NumericIdRouter()
router.register("jobs", JobViewSet, basename="job")

urlpatterns = router.urls
