"""An exported file imported again (through the import service) gives the same questions, completions and labels."""

import io
import zipfile

from annotation.models import Item
from reports import services
from reports.exports.builders import pseudonym_key
from reports.exports.pseudonyms import pseudonym
from reports.models import ExportJob
from verifybench import services as import_services
from verifybench.models import Completion, PriorLabel, Question, ReferenceAnswer


def export_file(project, fmt, name, **options) -> bytes:
    job = services.create_export(project=project, format=fmt, options=options, enqueue=False)
    job = services.run_export_now(job)
    assert job.status == ExportJob.Status.SUCCEEDED, job.error
    with zipfile.ZipFile(services.export_bundle(job)) as bundle:
        return bundle.read(name)


def question_view(dataset):
    return {
        q.external_id: (
            q.text,
            q.source,
            q.answer_type,
            q.answer_class,
            ReferenceAnswer.objects.get(question=q, is_primary=True).final_answer,
        )
        for q in Question.objects.filter(dataset=dataset)
    }


def test_verifybench_export_imports_back_with_the_same_questions_completions_and_labels(verifybench_data, export_root):
    data = export_file(verifybench_data.project, "verifybench", "verifybench.jsonl", per_type=2, seed=5)
    report = import_services.import_jsonl(
        dataset_name="vb reimported", source=io.BytesIO(data), fmt="verifybench", source_name="verifybench.jsonl"
    )
    assert report.ok and report.completions_created == 10 and report.prior_labels_created == 10
    imported = Completion.objects.filter(question__dataset_id=report.dataset_id)
    exported_questions = {c.question.external_id for c in imported}
    original = {k: v for k, v in question_view(verifybench_data.dataset).items() if k in exported_questions}
    assert question_view(imported.first().question.dataset) == original
    for completion in imported.select_related("question"):
        source = Completion.objects.get(
            question__dataset=verifybench_data.dataset,
            question__external_id=completion.question.external_id,
            external_id=completion.external_id,
        )
        item = Item.objects.get(project=verifybench_data.project, subject_id=source.pk)
        label = PriorLabel.objects.get(completion=completion, source_format="verifybench")
        assert (completion.text, completion.model_name, completion.content_hash) == (
            source.text,
            source.model_name,
            source.content_hash,
        )
        assert label.is_correct is item.final_value
        labellers = item.labels.order_by("created_at", "id").values_list("annotator_id", flat=True)
        assert label.annotators == [pseudonym(pseudonym_key(), user_id) for user_id in labellers]


def test_mumath_export_imports_back_with_the_same_problems_solutions_and_labels(mumath_data, export_root):
    data = export_file(mumath_data.project, "mumath", "mumath.jsonl", seed=2)
    report = import_services.import_jsonl(
        dataset_name="mu reimported", source=io.BytesIO(data), fmt="mumath", source_name="mumath.jsonl"
    )
    assert report.ok and report.questions_created == 3 and report.prior_labels_created == 10
    for completion in Completion.objects.filter(question__dataset_id=report.dataset_id).select_related("question"):
        question = completion.question
        original_question = Question.objects.get(dataset=mumath_data.dataset, external_id=question.external_id)
        assert question.text == original_question.text
        assert question.references.get().final_answer == original_question.references.get().final_answer
        candidates = {
            c.text: c for c in Completion.objects.filter(question=original_question, model_name=completion.model_name)
        }
        source = candidates[completion.text]
        item = Item.objects.get(project=mumath_data.project, subject_id=source.pk)
        assert completion.prior_labels.get(source_format="mumath").is_correct is item.final_value


def test_verifybench_hard_export_imports_back_with_every_resolved_item_and_its_label(verifybench_data, export_root):
    data = export_file(verifybench_data.project, "verifybench-hard", "verifybench_hard.jsonl")
    report = import_services.import_jsonl(
        dataset_name="hard reimported", source=io.BytesIO(data), source_name="verifybench_hard.jsonl"
    )  # format detected from the fields
    exportable = verifybench_data.project.items.filter(state="resolved", excluded=False, is_gold=False)
    assert report.ok and report.format == "verifybench"
    assert report.completions_created == exportable.count() == report.prior_labels_created
    for item in exportable.select_related("project"):
        copy = Completion.objects.get(
            question__dataset_id=report.dataset_id,
            question__external_id=item.subject.question.external_id,
            external_id=item.subject.external_id,
        )
        assert (copy.text, copy.model_name) == (item.subject.text, item.subject.model_name)
        assert copy.prior_labels.get(source_format="verifybench").is_correct is item.final_value
