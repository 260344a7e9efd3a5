"""Stand-in for torchvision, used ONLY by specguard's SGLang argument-resolution venv.

Why: SGLang 0.5.23 imports torchvision at module level in multimodal helpers that
``resolve_once()`` pulls in through ``sglang.srt.configs`` (e.g.
``sglang/srt/multimodal/internvl_utils.py``: ``import torchvision.transforms as T``,
``from torchvision.transforms.functional import InterpolationMode``), and transformers
5.19 (``image_utils.py``) imports ``torchvision.io`` / ``torchvision.transforms`` once
``find_spec("torchvision")`` succeeds. Argument resolution never *calls* torchvision, and
PyPI has no CPU torchvision build matching torch 2.13.0+cpu (a real torchvision wheel
built for another torch fails at import with ``operator torchvision::nms does not
exist``).

What: every ``torchvision.<anything>`` submodule is importable (created on demand by a
meta-path finder), every attribute is a placeholder that raises when called, and
``InterpolationMode`` is a real Enum with torchvision's members (transformers builds a
dict from it at import time). Nothing here does image work.
"""

import enum
import importlib.abc
import importlib.machinery
import sys

__version__ = "0.0.0+specguard.stub"


class _Missing:
    """Placeholder for any torchvision name: importable, fails when used."""

    def __init__(self, name):
        self._name = name

    def __call__(self, *a, **k):
        raise RuntimeError(
            f"torchvision stub: {self._name} is not available in the specguard SGLang venv"
        )

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        return _Missing(f"{self._name}.{item}")

    def __mro_entries__(self, bases):
        return (object,)

    def __repr__(self):
        return f"<torchvision stub {self._name}>"


class InterpolationMode(enum.Enum):
    # Same members/values as torchvision.transforms.functional.InterpolationMode.
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


class ImageReadMode(enum.Enum):
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = 4  # noqa: PIE796 - torchvision's own alias of RGB_ALPHA


def _module_getattr(modname):
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "InterpolationMode":
            return InterpolationMode
        if name == "ImageReadMode":
            return ImageReadMode
        return _Missing(f"{modname}.{name}")

    return __getattr__


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__path__ = []  # every stub module is a package: any depth imports
        module.__version__ = __version__
        module.__getattr__ = _module_getattr(module.__name__)


class _StubFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname.startswith("torchvision."):
            return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)
        return None


if not any(isinstance(f, _StubFinder) for f in sys.meta_path):
    sys.meta_path.append(_StubFinder())

__getattr__ = _module_getattr("torchvision")
