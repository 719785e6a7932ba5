from tests.casemgmt.cases.conftest import case_type, make_case, outsider, reader  # noqa: F401
