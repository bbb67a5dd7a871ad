"""Annotator models: Dawid-Skene for categorical labels, a bias-and-noise model for interval proof scores.

Pure numpy, no Django imports. Both models weigh each person by how reliable their labels have been, instead of
the plain majority that counts a careless annotator like a careful one.

One module per concern:

- `fitting`: the input triples, integer coding of ids and `Convergence`, shared by both models;
- `dawid_skene`: the Dawid-Skene EM and `fit_dawid_skene`;
- `dawid_skene_model`: the fitted `DawidSkeneModel` and what it reports (item posteriors, annotator estimates);
- `weak_votes`: verifier votes as weak labels of fixed confusion (`WeakSource`), applied after the fit;
- `intervals`: bootstrap intervals of the annotators' estimates (`bootstrap_annotators`);
- `grader_model`: the bias-and-noise model of proof graders (`fit_grader_model`).

Neither model comes from a package: crowd-kit, the maintained Dawid-Skene implementation on PyPI, works on pandas
frames, pulls scikit-learn, nltk and transformers, and has neither Dirichlet smoothing, nor verifier votes of fixed
confusion, nor per-cell uncertainty.
"""

from core.metrics.annotator_models.dawid_skene import fit_dawid_skene
from core.metrics.annotator_models.dawid_skene_model import (
    AnnotatorEstimate,
    DawidSkeneModel,
    ItemPosterior,
    StratumAccuracy,
)
from core.metrics.annotator_models.fitting import Convergence, GradeTriple, LabelTriple
from core.metrics.annotator_models.grader_model import (
    GraderEstimate,
    GraderModel,
    ProofScoreEstimate,
    fit_grader_model,
)
from core.metrics.annotator_models.intervals import AnnotatorInterval, bootstrap_annotators
from core.metrics.annotator_models.weak_votes import WeakSource

__all__ = [
    "AnnotatorEstimate",
    "AnnotatorInterval",
    "Convergence",
    "DawidSkeneModel",
    "GradeTriple",
    "GraderEstimate",
    "GraderModel",
    "ItemPosterior",
    "LabelTriple",
    "ProofScoreEstimate",
    "StratumAccuracy",
    "WeakSource",
    "bootstrap_annotators",
    "fit_dawid_skene",
    "fit_grader_model",
]
