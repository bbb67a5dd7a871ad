from rest_framework.routers import DefaultRouter

from . import views

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("grading/tasks", views.ProofTaskViewSet, basename="proof-task")
router.register("grading/rubrics", views.RubricViewSet, basename="rubric")
router.register("grading/competitions", views.CompetitionViewSet, basename="competition")
router.register("grading/items", views.ProofItemViewSet, basename="proof-item")

urlpatterns = router.urls
