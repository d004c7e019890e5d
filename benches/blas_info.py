"""Which BLAS numpy runs, and with which kernels: shared by the benchmark references.

`prh-native bench` starts these scripts with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
removed from the environment (machines that set them for old OpenBLAS builds pin numpy to
slower kernels); this reports what OpenBLAS then chose, through threadpoolctl when it is
installed (it is on PyPI), else numpy's build configuration.
"""

import numpy as np


def blas_info() -> str:
    """One line: library, version, kernel architecture, threads (e.g.
    "openblas 0.3.31 (Haswell kernels, 1 thread(s), pthreads)")."""
    try:
        import threadpoolctl

        pools = [p for p in threadpoolctl.threadpool_info() if p.get("user_api") == "blas"]
        if pools:
            p = pools[0]
            return (f"{p.get('internal_api', '?')} {p.get('version', '?')} "
                    f"({p.get('architecture', '?')} kernels, {p.get('num_threads', '?')} thread(s), "
                    f"{p.get('threading_layer', '?')})")
    except ImportError:
        pass
    try:
        name = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
        return f"{name} (kernel unknown: pip install threadpoolctl to see it)"
    except Exception:  # older numpy: no dict mode
        return "unknown"
