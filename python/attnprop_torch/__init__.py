"""attnprop_torch: PyTorch modules (and ONNX files) as exact attnprop model files.

    from attnprop_torch import import_model
    doc = import_model(module, alphabet=["0", "1"], eos="$", eos_position="last",
                       readout="logit", name="my-model")
    json.dump(doc, open("my-model.json", "w"))

import_model follows the module's own forward (module(ids) -> logits) at several lengths and
writes what it computes: attention heads, positionwise updates, positions as formulas in i and
n, every weight as the exact rational it is. What it cannot express is refused, every operation
at once, with its module path and source line. docs/torch.md describes the contract, the
command line (python3 -m attnprop_torch import|compare ...) and import_onnx.
"""
from .exact import ExportError

__version__ = "0.2.0"
__all__ = ["import_model", "import_onnx", "export_encoder", "ImportRefused", "ExportError",
           "__version__"]


def __getattr__(name):
    # torch is imported on first use, so that the command line reports a missing script or a
    # bad argument without paying for the import of torch.
    if name in ("import_model", "ImportRefused"):
        from . import importer
        return getattr(importer, name)
    if name == "import_onnx":
        from .onnx_import import import_onnx
        return import_onnx
    if name == "export_encoder":
        from .export import export_encoder
        return export_encoder
    raise AttributeError("module 'attnprop_torch' has no attribute %r" % name)
