from core.routers import NumericIdRouter

from . import proof_views, run_views

router = NumericIdRouter()
router.register("grading/tasks", proof_views.ProofTaskViewSet, basename="proof-task")
router.register("grading/rubrics", proof_views.RubricViewSet, basename="rubric")
router.register("grading/competitions", proof_views.CompetitionViewSet, basename="competition")
router.register("grading/items", proof_views.ProofItemViewSet, basename="proof-item")
router.register("grading/judge-hosts", run_views.AllowedJudgeHostViewSet, basename="judge-host")
router.register("grading/verifiers", run_views.VerifierConfigViewSet, basename="verifier-config")
router.register("grading/runs", run_views.VerificationRunViewSet, basename="verification-run")
router.register("grading/selections", run_views.SelectionViewSet, basename="selection")

urlpatterns = router.urls
