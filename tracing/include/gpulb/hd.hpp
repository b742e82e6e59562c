// GPULB_HD marks code that runs on both backends: __host__ __device__ under nvcc, nothing for the
// host compiler. Its own header so that code needing only the macro does not pull the trace schema.
#pragma once

#if defined(__CUDACC__)
#define GPULB_HD __host__ __device__
#else
#define GPULB_HD
#endif
