import django_filters

from verifybench.models import AnswerClass, AnswerTypeCode, Completion, Domain, PriorLabel, Question, ReferenceAnswer


class QuestionFilter(django_filters.FilterSet):
    dataset_name = django_filters.CharFilter(field_name="dataset__name", label="Dataset name (exact)")
    answer_type = django_filters.MultipleChoiceFilter(choices=AnswerTypeCode.choices)
    answer_class = django_filters.MultipleChoiceFilter(choices=AnswerClass.choices)
    domain = django_filters.MultipleChoiceFilter(choices=Domain.choices)
    source = django_filters.CharFilter()
    source_prefix = django_filters.CharFilter(field_name="source", lookup_expr="startswith")
    subject = django_filters.CharFilter()
    external_id = django_filters.CharFilter()

    class Meta:
        model = Question
        fields = [
            "dataset",
            "dataset_name",
            "answer_type",
            "answer_class",
            "domain",
            "source",
            "subject",
            "external_id",
        ]


class ReferenceAnswerFilter(django_filters.FilterSet):
    dataset = django_filters.NumberFilter(field_name="question__dataset")
    dataset_name = django_filters.CharFilter(field_name="question__dataset__name", label="Dataset name (exact)")

    class Meta:
        model = ReferenceAnswer
        fields = ["question", "dataset", "dataset_name", "is_primary"]


class CompletionFilter(django_filters.FilterSet):
    dataset = django_filters.NumberFilter(field_name="question__dataset")
    dataset_name = django_filters.CharFilter(field_name="question__dataset__name", label="Dataset name (exact)")
    model_name = django_filters.CharFilter()
    answer_class = django_filters.MultipleChoiceFilter(field_name="question__answer_class", choices=AnswerClass.choices)

    class Meta:
        model = Completion
        fields = ["dataset", "dataset_name", "question", "model_name", "sample_index", "is_greedy", "answer_class"]


class PriorLabelFilter(django_filters.FilterSet):
    dataset = django_filters.NumberFilter(field_name="completion__question__dataset")
    question = django_filters.NumberFilter(field_name="completion__question")
    model_name = django_filters.CharFilter(field_name="completion__model_name")

    class Meta:
        model = PriorLabel
        fields = ["completion", "question", "dataset", "model_name", "is_correct", "source_format"]
