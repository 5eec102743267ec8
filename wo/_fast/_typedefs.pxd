# Shared C types of the wo search core (one place, as sklearn/utils/_typedefs.pxd).
from libc.stdint cimport uint32_t, int32_t, int16_t, uint8_t, uint64_t, int64_t

ctypedef uint32_t atom_t      # 32-bit MurmurHash3 atom of a string (word form, POS tag)
ctypedef uint32_t feat_t      # hashed feature index before masking
ctypedef float weight_t       # model weight
ctypedef double score_t       # edge score F(e) (unscaled sum over actions)
ctypedef int32_t eid_t        # edge id in the per-sentence arena
