"""attnprop_torch: PyTorch transformer encoders as exact attnprop model files.

    from attnprop_torch import export_encoder
    doc = export_encoder(encoder, token_embedding, alphabet=["0", "1"], eos="$",
                         positional="sinusoidal", readout=lin, name="my-model")
    json.dump(doc, open("my-model.json", "w"))

docs/torch.md describes the contract, the mapping and the command line
(python3 -m attnprop_torch export|compare SCRIPT.py).
"""
from .exact import ExportError

__version__ = "0.1.0"
__all__ = ["export_encoder", "ExportError", "__version__"]


def __getattr__(name):
    # torch is imported on first use of export_encoder, so that the command line reports a
    # missing script or a bad argument without paying for the import of torch.
    if name == "export_encoder":
        from .export import export_encoder
        return export_encoder
    raise AttributeError("module 'attnprop_torch' has no attribute %r" % name)
