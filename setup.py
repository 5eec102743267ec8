"""Build the Cython extensions of wo (wo/_fast)."""
import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

# -g0: no debug information in the shipped .so files (20.9 -> about 6 MB; the code is the same)
ext_kwargs = dict(include_dirs=[np.get_include()], extra_compile_args=["-O3", "-g0"],
                  define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")])
# one compiled module per concern (sklearn/tree style); grammars cimport the driver's .pxd
MODULES = ["_hash", "_weights", "_arena", "_agenda", "_search", "_train", "_lm", "_lmtrie", "_lmfeat", "_dep", "_ccg", "_idl", "_gyro", "_smt", "_order", "_complete"]
extensions = [Extension(f"wo._fast.{m}", [f"wo/_fast/{m}.pyx"], **ext_kwargs) for m in MODULES]
setup(ext_modules=cythonize(extensions, compiler_directives={"language_level": "3"}))
