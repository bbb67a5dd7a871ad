from django.urls import path

from core.routers import NumericIdRouter

from . import eval_views, export_views

router = NumericIdRouter()
router.register("exports", export_views.ExportJobViewSet, basename="export")

urlpatterns = router.urls + [
    path("projects/<int:project_id>/meta-eval/", eval_views.MetaEvalView.as_view(), name="project-meta-eval"),
    path("datasets/<int:dataset_id>/model-eval/", eval_views.ModelEvalView.as_view(), name="dataset-model-eval"),
]
