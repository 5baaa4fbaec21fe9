"""Builds a minimal importable copy of one engine release's fused-MoE Triton path from its wheel, for engine_moe.py.

vLLM's fused MoE for block-FP8 checkpoints (DeepSeek-V3/R1) is Python and Triton: ``fused_experts_impl``
quantises activations per 128-element group (a Triton kernel), sorts token-expert pairs into expert blocks (a Triton
kernel when ``VLLM_ENABLE_MOE_ALIGN_BLOCK_SIZE_TRITON=1``), and runs the two grouped GEMMs as Triton kernels with the
release's tuned tile configs (``fused_moe/configs/*.json``). Only two steps are compiled C++ ops: the SiLU-and-multiply
between the GEMMs and the final sum over the top-k outputs. The full package cannot be installed on a machine whose
PyTorch differs from the release's pin, so this script extracts the Python and JSON files that path reads and writes
small stand-ins for the package modules around them (logger, platform, custom-op registration) and for the two C++
ops (``torch.nn.functional.silu`` times the gate, ``torch.sum`` over top-k): engine_moe.py times the stand-in
activation separately so that its cost is visible.

SGLang 0.4.x carries its own copy of the same Triton GEMM kernel with its own tuned configs. Its CUDA build calls
compiled ``sgl_kernel`` ops for activation quantisation, expert sorting and SiLU-and-multiply; the stand-in platform
reports no CUDA, so the module takes its own portable paths instead: SGLang's Triton quantisation and sorting kernels
(``ENABLE_MOE_ALIGN_BLOCK_SIZE_TRITON=1``) and the vLLM-op stand-in for the activation.

Nothing extracted is committed: the output folder is a scratch folder that a device run carries.

Usage: python bench/gpu/engine_moe_shim.py --wheel vllm-0.8.3-...whl --out .gpu_carry/vllm-0.8.3
       python bench/gpu/engine_moe_shim.py --engine sglang --wheel sglang-0.4.5.post1-...whl --out .gpu_carry/sglang
Not imported by the package.
"""

from __future__ import annotations

import argparse
import zipfile
from pathlib import Path

# The release's files the fused-MoE path executes (paths inside the wheel).
EXTRACT_VLLM = (
    "vllm/envs.py",
    "vllm/model_executor/layers/fused_moe/fused_moe.py",
    "vllm/model_executor/layers/fused_moe/moe_align_block_size.py",
    "vllm/model_executor/layers/fused_moe/deep_gemm_moe.py",
    "vllm/model_executor/layers/fused_moe/utils.py",
    "vllm/model_executor/layers/fused_moe/rocm_aiter_fused_moe.py",
    "vllm/model_executor/layers/quantization/utils/fp8_utils.py",
    "vllm/model_executor/layers/quantization/utils/int8_utils.py",  # from 0.8.4
)
CONFIG_DIR_VLLM = "vllm/model_executor/layers/fused_moe/configs/"
EXTRACT_SGLANG = (
    "sglang/srt/layers/moe/fused_moe_triton/fused_moe.py",
    "sglang/srt/layers/quantization/fp8_kernel.py",
)
CONFIG_DIR_SGLANG = "sglang/srt/layers/moe/fused_moe_triton/configs/"

VLLM_OPS = {
    "vllm/__init__.py": '"""Stand-in package root: only the fused-MoE path is present."""\n',
    "vllm/_custom_ops.py": (
        '"""Stand-ins for the compiled ops the block-FP8 fused-MoE path calls."""\n'
        "import torch\n\n\n"
        "def moe_sum(x: torch.Tensor, out: torch.Tensor) -> None:\n"
        "    torch.sum(x, dim=1, out=out)\n\n\n"
        "def silu_and_mul(out: torch.Tensor, x: torch.Tensor) -> None:\n"
        "    d = x.shape[-1] // 2\n"
        "    torch.mul(torch.nn.functional.silu(x[..., :d]), x[..., d:], out=out)\n\n\n"
        "setattr(torch.ops._C, 'silu_and_mul', silu_and_mul)\n"
    ),
}

STUBS_SGLANG = {
    **VLLM_OPS,
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/layers/__init__.py": "",
    "sglang/srt/layers/moe/__init__.py": "",
    "sglang/srt/layers/moe/topk.py": "def select_experts(*args, **kwargs):\n    raise NotImplementedError\n",
    "sglang/srt/layers/moe/fused_moe_triton/__init__.py": "def get_config():\n    return None\n",
    "sglang/srt/layers/quantization/__init__.py": "",
    "sglang/srt/layers/quantization/int8_kernel.py": (
        "def per_token_group_quant_int8(*args, **kwargs):\n    raise NotImplementedError\n\n\n"
        "def per_token_quant_int8(*args, **kwargs):\n    raise NotImplementedError\n"
    ),
    "sglang/srt/custom_op.py": "def scaled_fp8_quant(*args, **kwargs):\n    raise NotImplementedError\n",
    "sglang/srt/utils.py": (
        "import os\n\nimport torch\n\n\n"
        "def direct_register_custom_op(*args, **kwargs) -> None:\n    return None\n\n\n"
        "def get_bool_env_var(name: str, default: str = 'false') -> bool:\n"
        "    return os.getenv(name, default).lower() in ('true', '1')\n\n\n"
        "def get_device_name(device_id: int = 0) -> str:\n    return torch.cuda.get_device_name(device_id)\n\n\n"
        "def get_device_core_count(device_id: int = 0) -> int:\n"
        "    return torch.cuda.get_device_properties(device_id).multi_processor_count\n\n\n"
        "def get_device_sm() -> int:\n"
        "    major, minor = torch.cuda.get_device_capability()\n    return major * 10 + minor\n\n\n"
        "def is_cuda() -> bool:\n    return False\n\n\n"
        "def is_hip() -> bool:\n    return False\n\n\n"
        "def supports_custom_op() -> bool:\n    return False\n"
    ),
}

STUBS_VLLM = {
    **VLLM_OPS,
    "vllm/logger.py": (
        "import logging\n\n\ndef init_logger(name: str) -> logging.Logger:\n    return logging.getLogger(name)\n"
    ),
    "vllm/platforms/__init__.py": (
        "import torch\n\n\nclass _Cuda:\n"
        "    simple_compile_backend = 'inductor'\n\n"
        "    def is_rocm(self) -> bool:\n        return False\n\n"
        "    def fp8_dtype(self) -> torch.dtype:\n        return torch.float8_e4m3fn\n\n"
        "    def get_device_name(self) -> str:\n        return torch.cuda.get_device_name()\n\n\n"
        "current_platform = _Cuda()\n"
    ),
    "vllm/utils.py": (
        "def cdiv(a: int, b: int) -> int:\n    return -(a // -b)\n\n\n"
        "def round_up(x: int, y: int) -> int:\n    return ((x + y - 1) // y) * y\n\n\n"
        "def direct_register_custom_op(*args, **kwargs) -> None:\n    return None\n"
    ),
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/layers/__init__.py": "",
    "vllm/model_executor/layers/quantization/__init__.py": "",
    "vllm/model_executor/layers/quantization/utils/__init__.py": "",
    "vllm/model_executor/layers/quantization/utils/quant_utils.py": (
        "def scaled_dequantize(*args, **kwargs):\n    raise NotImplementedError('not on the fused-MoE path')\n"
    ),
    "vllm/model_executor/layers/quantization/utils/w8a8_utils.py": "CUTLASS_BLOCK_FP8_SUPPORTED = False\n",
    "vllm/model_executor/layers/fused_moe/__init__.py": ("def get_config():\n    return None\n"),
}


ENGINES = {
    "vllm": (EXTRACT_VLLM, CONFIG_DIR_VLLM, STUBS_VLLM),
    "sglang": (EXTRACT_SGLANG, CONFIG_DIR_SGLANG, STUBS_SGLANG),
}


def build(engine: str, wheel: Path, out: Path, configs_from: Path | None) -> list[str]:
    """Writes the extracted files and stand-ins under ``out``; returns the config files copied."""
    extract, config_dir, stubs = ENGINES[engine]
    with zipfile.ZipFile(wheel) as zf:
        present = set(zf.namelist())
        for name in (n for n in extract if n in present):
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(name))
    with zipfile.ZipFile(configs_from or wheel) as zf:
        configs = [n for n in zf.namelist() if n.startswith(config_dir) and "device_name=NVIDIA_H" in n]
        for name in configs:
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(name))
    for name, text in stubs.items():
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return configs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=sorted(ENGINES), default="vllm")
    parser.add_argument("--wheel", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--configs-from", type=Path, help="take the tuned tile configs from this (later) wheel")
    args = parser.parse_args()
    configs = build(args.engine, args.wheel, args.out, args.configs_from)
    extract, _, stubs = ENGINES[args.engine]
    print(f"{args.out}: {len(extract)} files, {len(stubs)} stand-ins, {len(configs)} Hopper configs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
