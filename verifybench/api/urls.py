from core.routers import NumericIdRouter

from . import views

router = NumericIdRouter()
router.register("datasets", views.DatasetViewSet, basename="dataset")
router.register("questions", views.QuestionViewSet, basename="question")
router.register("references", views.ReferenceAnswerViewSet, basename="reference")
router.register("completions", views.CompletionViewSet, basename="completion")
router.register("prior-labels", views.PriorLabelViewSet, basename="prior-label")
router.register("imports", views.ImportJobViewSet, basename="import")

urlpatterns = router.urls
