"""Runs every ```python example of docs/PYTHON.md, in order, in one namespace:
the documentation's examples are tests."""

import os
import re

import pytest

DOC = os.path.join(os.environ.get("NEARDUP_SOURCE_DIR",
                                  os.path.join(os.path.dirname(__file__), "..", "..")),
                   "docs", "PYTHON.md")


def examples():
    with open(DOC, encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)


def test_docs_have_examples():
    assert len(examples()) >= 4


def test_docs_examples_run():
    namespace = {}
    for i, code in enumerate(examples()):
        try:
            exec(compile(code, f"{DOC} example {i}", "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - report which example failed
            pytest.fail(f"docs/PYTHON.md example {i} failed: {e!r}\n{code}")
