"""Thread-count control."""

import pytest

import contextsteer as cs


def test_threads_context_manager_restores():
    before = cs.get_num_threads()
    with cs.threads(1):
        assert cs.get_num_threads() == 1
    with cs.threads(3):
        assert cs.get_num_threads() == 3
    assert cs.get_num_threads() == before


@pytest.mark.parametrize("bad", [0, -2])
def test_set_num_threads_rejects_non_positive(bad):
    with pytest.raises(ValueError, match="n >= 1"):
        cs.set_num_threads(bad)


def test_set_num_threads_rejects_non_int():
    with pytest.raises(TypeError, match="int"):
        cs.set_num_threads(2.5)
