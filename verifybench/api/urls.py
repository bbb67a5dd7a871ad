from django.urls import path
from rest_framework.routers import SimpleRouter

from . import eval_views, export_views, views

router = SimpleRouter()
router.register("datasets", views.DatasetViewSet, basename="dataset")
router.register("questions", views.QuestionViewSet, basename="question")
router.register("references", views.ReferenceAnswerViewSet, basename="reference")
router.register("completions", views.CompletionViewSet, basename="completion")
router.register("prior-labels", views.PriorLabelViewSet, basename="prior-label")
router.register("exports", export_views.ExportJobViewSet, basename="export")

urlpatterns = router.urls + [
    path("projects/<int:project_id>/meta-eval/", eval_views.MetaEvalView.as_view(), name="project-meta-eval"),
    path("datasets/<int:dataset_id>/model-eval/", eval_views.ModelEvalView.as_view(), name="dataset-model-eval"),
]
