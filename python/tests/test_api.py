"""The package's public surface: what `dir(fdlab)` shows is fdlab's own API."""

import fdlab


def test_dir_shows_only_the_public_api():
    # `dir(fdlab)` used to list the modules and typing names the package imported
    # (Any, List, np, sys, enum), which tab completion offered as fdlab's own.
    public = {n for n in dir(fdlab) if not n.startswith("_")}
    assert public == set(fdlab.__all__) - {"__version__"}, public
    for name in ("Any", "List", "Optional", "Sequence", "Union", "np", "sys", "enum"):
        assert not hasattr(fdlab, name), name


def test_the_axis_convention_is_documented_where_the_api_is():
    # Axis 0 / "x" is the LAST NumPy axis: said in the module and in apply's and Stencil's
    # docstrings, where users look first.
    def text(doc):
        return " ".join(doc.split()).lower()

    assert "is the last numpy axis" in text(fdlab.__doc__)
    assert "is the last numpy axis" in text(fdlab.apply.__doc__)
    assert "is the last numpy axis" in text(fdlab.Stencil.derivative.__doc__)
