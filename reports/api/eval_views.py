"""Evaluation endpoints: verifiers against human labels (meta-eval) and models by Pass@k / G-Pass@k."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import AnnotationProject
from core import workspaces
from core.permissions import IsResearcherOrAdmin
from reports import evaluation
from verifybench.models import Dataset


class CSVRenderer(BaseRenderer):
    """Lets `?format=csv` through content negotiation; the view answers with the CSV text itself."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data if isinstance(data, (str, bytes)) else str(data)


class MetaEvalView(APIView):
    permission_classes = [IsResearcherOrAdmin]
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        summary="Verifiers and judges scored against the project's final human labels",
        description=(
            "Accuracy per coarse answer class and their mean, TP/FP/TN/FN, TPR, TNR, PPV, NPV and macro-F1 overall "
            "and per author model, inconclusive rate (inconclusive counts as a wrong judgment), coverage and the "
            "labeled items without a verdict; with several verifiers the pairwise agreement matrix. Only resolved, "
            "non-excluded, non-gold items count. Without `verifier`, every verifier with verdicts on the project. "
            "Each verifier's `intervals` give every figure a 95% interval, overall and per answer class, answer "
            "type, source and author model, from a bootstrap that resamples questions (seeded: the same request "
            "gives the same intervals). `comparisons` compare every pair of verifiers on the items both judged: the "
            "difference in each figure with its paired-bootstrap interval, McNemar's exact test and plain "
            "sentences. `label_noise` gives the figures expected under the humans' own error and the final labels "
            "whose probability of being right is below `uncertain_below`; `sample_size` how many more labeled items "
            "each answer class and type needs for accuracy intervals `target_width` wide."
        ),
        parameters=[
            OpenApiParameter("verifier", str, many=True, description="VerifierConfig name; repeat for several"),
            OpenApiParameter("format", str, enum=["json", "csv"], description="csv for a table download"),
            OpenApiParameter("bootstrap", int, description="bootstrap resamples, 0 to 10000 (default 1000; 0: none)"),
            OpenApiParameter("seed", int, description="bootstrap seed (default 0)"),
            OpenApiParameter("target_width", float, description="target width of a 95% interval (default 0.1)"),
            OpenApiParameter(
                "uncertain_below", float, description="a final label less likely right than this is uncertain (0.9)"
            ),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, project_id: int):
        project = get_object_or_404(
            AnnotationProject.objects.filter(workspaces.condition(request.user, "dataset__workspace")), pk=project_id
        )
        try:
            uncertainty = evaluation.Uncertainty.parse(request.query_params)
            result = evaluation.meta_evaluate(project, request.query_params.getlist("verifier"), uncertainty)
        except evaluation.EvaluationError as error:
            raise ValidationError({"detail": str(error)}) from error
        if request.accepted_renderer.format == "csv":
            response = HttpResponse(evaluation.meta_evaluation_csv(result), content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="meta-eval-project-{project.pk}.csv"'
            return response
        return Response(result.as_dict())


class ModelEvalView(APIView):
    permission_classes = [IsResearcherOrAdmin]

    @extend_schema(
        summary="Accuracy, greedy accuracy, Pass@k, G-Pass@k_tau and mG-Pass@k per model",
        description=(
            "Correctness of each completion from `source`: `project:<id>` (final human labels of a correctness "
            "project of this dataset) or `verifier:<name>` (that verifier's verdicts; inconclusive counts as "
            "incorrect). Means over questions with 95% bootstrap intervals; `warnings` says what was left out "
            "and where a question has fewer than 3k samples."
        ),
        parameters=[
            OpenApiParameter("source", str, required=True, description="project:<id> or verifier:<name>"),
            OpenApiParameter("k", int, many=True, description="values of k (default 4, 8, 16)"),
            OpenApiParameter("tau", str, many=True, description="thresholds in (0, 1] (default 0.25, 0.5, 0.75, 1.0)"),
            OpenApiParameter("bootstrap", int, description="bootstrap resamples (default 1000, 0 for none)"),
            OpenApiParameter("seed", int, description="bootstrap seed (default 0)"),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, dataset_id: int):
        dataset = get_object_or_404(Dataset.objects.filter(workspaces.condition(request.user)), pk=dataset_id)
        params = request.query_params
        try:
            source = evaluation.parse_source(params.get("source", ""))
            ks = evaluation.parse_ks(params.getlist("k")) or list(evaluation.DEFAULT_KS)
            taus = evaluation.parse_taus(params.getlist("tau")) or list(evaluation.DEFAULT_TAUS)
            bootstrap = _non_negative_int(params, "bootstrap", 1000)
            seed = _non_negative_int(params, "seed", 0)
            result = evaluation.model_evaluate(dataset, source, ks, taus, bootstrap=bootstrap, seed=seed)
        except evaluation.EvaluationError as error:
            raise ValidationError({"detail": str(error)}) from error
        return Response(
            {
                "dataset": {"id": dataset.pk, "name": dataset.name},
                "source": source.as_dict(),
                "ks": ks,
                "taus": taus,
                **result,
            }
        )


def _non_negative_int(params, name: str, default: int) -> int:
    text = params.get(name)
    if text is None or text == "":
        return default
    if not text.strip().isdigit():
        raise evaluation.EvaluationError(f"{name} must be a non-negative integer, got {text!r}")
    return int(text)
