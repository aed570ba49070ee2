import pytest

from benchmark.registry import Registry, UnknownNameError


def make_registry():
    reg = Registry("selector")

    @reg.register("full")
    class Full:
        """Whole graph."""

        def __init__(self):
            self.name = "full"

    @reg.register("khop", pattern=r"khop(?P<k>\d+)")
    class KHop:
        def __init__(self, k):
            self.k = k

    return reg


def test_plain_and_parametrised_names_resolve():
    reg = make_registry()
    assert reg.create("full").name == "full"
    assert reg.create("khop3").k == 3
    assert "khop12" in reg and "khop" not in reg
    assert reg.names() == ["full", "khop"]
    assert reg.describe()["full"] == "Whole graph."


def test_unknown_name_lists_known_names():
    reg = make_registry()
    with pytest.raises(UnknownNameError) as exc:
        reg.create("bm25-3")
    assert "unknown selector 'bm25-3'" in str(exc.value)
    assert "full, khop" in str(exc.value)


def test_double_registration_is_refused():
    reg = make_registry()
    with pytest.raises(ValueError, match="registered twice"):
        reg.register("full")(object)
