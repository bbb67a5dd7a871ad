from tests.exports.conftest import export_root, three_annotators, verifybench_data  # noqa: F401  (fixtures)
