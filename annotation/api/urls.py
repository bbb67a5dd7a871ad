from core.routers import NumericIdRouter

from . import views

router = NumericIdRouter()
router.register("projects", views.ProjectViewSet, basename="project")
router.register("tasks", views.TaskViewSet, basename="task")
router.register("items", views.ItemViewSet, basename="item")

urlpatterns = router.urls
