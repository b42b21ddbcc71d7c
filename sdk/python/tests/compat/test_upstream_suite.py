"""The Couler SDK's own unit tests, unchanged, against this package.

Each test class of the corpus's tests/*_test.py is collected here under its
own name (`DAGTest::test_input_dag_linear`); the golden-backed ones compare
`couler.workflow_yaml()` with the Argo YAML the Couler SDK produced.
"""

from __future__ import annotations

import importlib
import inspect
import unittest

import pytest
from corpus import corpus_dir, register_upstream_tests

_modules = register_upstream_tests()
if not _modules:
    pytest.skip("no Couler corpus at %s" % corpus_dir(), allow_module_level=True)



def _test_classes(module_name: str) -> dict[str, type]:
    module = importlib.import_module("couler.tests." + module_name)
    return {
        name: value
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and issubclass(value, unittest.TestCase)
        and value.__module__ == module.__name__
        and unittest.defaultTestLoader.getTestCaseNames(value)
    }


for _module_name in _modules:
    globals().update(_test_classes(_module_name))
