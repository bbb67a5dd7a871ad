"""Version 1 of each default judge template (VerifyBench, U-MATH, LiveMathBench contracts).

The texts are frozen here as they were when this migration was written: a migration must not depend on code that
changes later. Creating them is idempotent (get_or_create by name and version).
"""

from django.db import migrations

TEMPLATES = [
    {
        "name": "verifybench-final-judgment",
        "version": 1,
        "contract": "final_judgment",
        "system_template": "You grade responses to math and reasoning problems. You compare the final answer of a "
        "response with a reference answer and decide whether the response is correct. You are strict "
        "about the value of the answer and lenient about its form.",
        "user_template": "Decide whether the response below answers the question correctly, using the reference answer.\n"
        "\n"
        "Rules:\n"
        "- Judge the final answer only; the quality of the reasoning does not matter.\n"
        "- Different forms of the same answer are correct: unsimplified but equal expressions, "
        "fractions and decimals of the same value, the same values listed in another order when order "
        "does not matter, equivalent intervals, sets or equations, a choice given by its letter or by "
        "its content.\n"
        "- A response with no final answer, with several conflicting final answers, or with only part "
        "of a multi-part answer is incorrect.\n"
        "- When the reference asks for specific wording, the response must state the same thing.\n"
        "\n"
        "Question:\n"
        "{question}\n"
        "\n"
        "Reference answer:\n"
        "{reference}\n"
        "\n"
        "Response:\n"
        "{completion}\n"
        "\n"
        "Explain your comparison in a few sentences. Then end your reply with a last line that is "
        "exactly `Final Judgment: Yes` if the final answer of the response is correct, or exactly "
        "`Final Judgment: No` if it is not.",
        "extraction_template": "",
    },
    {
        "name": "umath-cot-extract",
        "version": 1,
        "contract": "cot_extract",
        "system_template": "You grade responses to math and reasoning problems. You compare the final answer of a "
        "response with a reference answer and decide whether the response is correct. You are strict "
        "about the value of the answer and lenient about its form.",
        "user_template": "Assess whether the response below answers the question correctly, using the reference answer.\n"
        "\n"
        "Rules:\n"
        "- Judge the final answer only; the quality of the reasoning does not matter.\n"
        "- Different forms of the same answer are correct: unsimplified but equal expressions, "
        "fractions and decimals of the same value, the same values listed in another order when order "
        "does not matter, equivalent intervals, sets or equations, a choice given by its letter or by "
        "its content.\n"
        "- A response with no final answer, with several conflicting final answers, or with only part "
        "of a multi-part answer is incorrect.\n"
        "- When the reference asks for specific wording, the response must state the same thing.\n"
        "\n"
        "Question:\n"
        "{question}\n"
        "\n"
        "Reference answer:\n"
        "{reference}\n"
        "\n"
        "Response:\n"
        "{completion}\n"
        "\n"
        "Think it through step by step: find the final answer of the response, compare it with the "
        "reference answer, and explain whether they agree. Finish with your conclusion in plain words.",
        "extraction_template": "Below is an assessment of whether a response to a problem is correct. Report the "
        "conclusion of the assessment as exactly one word:\n"
        "- Yes: the assessment concludes that the response is correct.\n"
        "- No: the assessment concludes that the response is incorrect.\n"
        "- Inconclusive: the assessment reaches no clear conclusion.\n"
        "\n"
        "Assessment:\n"
        "{judgment}\n"
        "\n"
        "Reply with one word: Yes, No or Inconclusive.",
    },
    {
        "name": "livemathbench-boxed",
        "version": 1,
        "contract": "boxed_yes_no",
        "system_template": "You grade responses to math and reasoning problems. You compare the final answer of a "
        "response with a reference answer and decide whether the response is correct. You are strict "
        "about the value of the answer and lenient about its form.",
        "user_template": "Decide whether the response below answers the question correctly, using the reference answer.\n"
        "\n"
        "Rules:\n"
        "- Judge the final answer only; the quality of the reasoning does not matter.\n"
        "- Different forms of the same answer are correct: unsimplified but equal expressions, "
        "fractions and decimals of the same value, the same values listed in another order when order "
        "does not matter, equivalent intervals, sets or equations, a choice given by its letter or by "
        "its content.\n"
        "- A response with no final answer, with several conflicting final answers, or with only part "
        "of a multi-part answer is incorrect.\n"
        "- When the reference asks for specific wording, the response must state the same thing.\n"
        "\n"
        "Question:\n"
        "{question}\n"
        "\n"
        "Reference answer:\n"
        "{reference}\n"
        "\n"
        "Response:\n"
        "{completion}\n"
        "\n"
        "If the final answer of the response is equivalent to the reference answer, end your reply with "
        "\\boxed{yes}. If it is not equivalent, or if it is hard to judge, end your reply with "
        "\\boxed{no}.",
        "extraction_template": "",
    },
]


def create_default_templates(apps, schema_editor):
    template_model = apps.get_model("grading", "PromptTemplate")
    for template in TEMPLATES:
        template_model.objects.get_or_create(
            name=template["name"],
            version=template["version"],
            defaults={
                key: template[key] for key in ("contract", "system_template", "user_template", "extraction_template")
            },
        )


class Migration(migrations.Migration):
    dependencies = [
        ("grading", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(create_default_templates, migrations.RunPython.noop),
    ]
