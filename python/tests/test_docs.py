"""Every ```python block of README.md, python/README.md and docs/*.md runs (the README's once
raised NameError: it used an array it never made).

Blocks of one file run in order in one namespace, as a reader pastes them into one session.
A block that imports CuPy or PyTorch is skipped, saying why, where that library or a GPU is
missing.
"""

import pathlib
import re

import pytest

import fdlab

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "python" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^( *)```python\n(.*?)^\1```", re.S | re.M)
GPU_LIBRARIES = ("cupy", "torch")


def _blocks(path):
    """The ```python blocks of `path`, dedented (a block inside a list item is indented)."""
    out = []
    for m in FENCE.finditer(path.read_text()):
        indent = len(m.group(1))
        lines = [line[indent:] for line in m.group(2).splitlines()]
        out.append("\n".join(lines))
    return out


def _needs(code):
    """The GPU array libraries a block imports."""
    return [lib for lib in GPU_LIBRARIES if re.search(rf"^\s*import {lib}\b", code, re.M)]


SNIPPETS = [(p, i) for p in DOCS for i in range(len(_blocks(p)))]


def test_the_documents_hold_python_snippets():
    # A renamed file or fence must not turn this test into a silent pass.
    names = {p.relative_to(ROOT).as_posix() for p, _ in SNIPPETS}
    assert {"README.md", "python/README.md"} <= names, names


@pytest.mark.parametrize(
    "path,index", SNIPPETS, ids=[f"{p.relative_to(ROOT)}:{i}" for p, i in SNIPPETS]
)
def test_snippet_runs(path, index, tmp_path, monkeypatch):
    blocks = _blocks(path)
    for lib in _needs(blocks[index]):
        pytest.importorskip(lib, reason=f"the snippet uses {lib}, which is not installed")
        if fdlab.info()["cuda_devices"] == 0:
            pytest.skip(f"the snippet runs on a GPU: {fdlab.info()['cuda_unavailable']}")
    monkeypatch.chdir(tmp_path)  # whatever a snippet writes stays out of the checkout
    namespace = {"__name__": "__snippet__"}
    # The blocks before it, as the reader ran them (GPU blocks left out: a CPU block never
    # depends on one).
    for code in blocks[:index]:
        if not _needs(code):
            exec(compile(code, f"{path.name}[earlier block]", "exec"), namespace)
    exec(compile(blocks[index], f"{path.name}[{index}]", "exec"), namespace)


def test_every_guide_is_compiled_for_its_rust_snippets():
    # The Rust side (crates/fdlab/src/lib.rs) includes README.md and each docs/*.md as doc
    # tests; a new guide must be listed there too, or its Rust snippets would go unchecked.
    lib = (ROOT / "crates" / "fdlab" / "src" / "lib.rs").read_text()
    for guide in sorted((ROOT / "docs").glob("*.md")):
        assert f'include_str!("../../../docs/{guide.name}")' in lib, guide.name
    assert 'include_str!("../../../README.md")' in lib
