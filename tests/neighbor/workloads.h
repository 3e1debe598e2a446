/* Workloads for the neighbor-alltoallv tests and benchmark (issue 5): halo exchanges of 2-D/3-D
 * stencils, SpMV communication of random sparse matrices with locality and of matrices read
 * from Matrix Market files (rows block-partitioned; a rank needs the x values of the columns
 * of its rows that other ranks own, and the global id of each value is its column).
 *
 * Two layers:
 *   wl_csr_*  global sparse matrices, no MPI (workloads_mat.c): Matrix Market reader/writer,
 *             generators (rotated anisotropic diffusion, smoothed-aggregation Galerkin
 *             coarsening, random with locality). Also used by tools/mcoll-gen-matrices.
 *   nb_*      per-rank communication patterns (workloads.c, nb_pattern.h), every rank
 *             computing the whole pattern from the global structure (no communication, so
 *             the pattern is consistent by construction). */
#ifndef NB_WORKLOADS_H
#define NB_WORKLOADS_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Compressed sparse rows; val may be NULL (structure only). Columns sorted, unique per row. */
typedef struct wl_csr {
    int64_t nrows, ncols;
    int64_t *rowptr; /* [nrows + 1] */
    int64_t *col;    /* [nnz] */
    double *val;     /* [nnz] or NULL */
} wl_csr_t;

static inline int64_t wl_nnz(const wl_csr_t *a)
{
    return a->rowptr ? a->rowptr[a->nrows] : 0;
}
void wl_csr_free(wl_csr_t *a);

/* Matrix Market "coordinate" matrices: field real|integer|pattern, symmetry
 * general|symmetric|skew-symmetric (expanded to both triangles). Duplicate entries are summed.
 * Returns 0, or -1 with a one-line reason naming the line in err (never aborts). */
int wl_mm_read(const char *path, wl_csr_t *a, char *err, size_t errlen);
int wl_mm_read_stream(FILE *f, const char *name, wl_csr_t *a, char *err, size_t errlen);
/* symmetric != 0 writes the lower triangle under "symmetric" (the caller knows a is). */
int wl_mm_write(FILE *f, const wl_csr_t *a, int symmetric, const char *comment);

/* A 2-D grid whose points are numbered lexicographically (x fastest) or in Morton (Z) order,
 * so that a block partition of the rows gives compact 2-D subdomains. */
typedef struct wl_grid {
    int nx, ny;
    int morton;
    int64_t *index; /* [nx*ny]: point (x, y) at x + nx*y -> row */
} wl_grid_t;
int wl_grid_init(wl_grid_t *g, int nx, int ny, int morton);
void wl_grid_free(wl_grid_t *g);

/* -div(K grad u) on the unit square, Dirichlet boundary, K = Q(theta) diag(1, eps) Q(theta)^T,
 * finite differences with a 9-point (central mixed derivative) or 7-point (one-sided mixed
 * derivative using the NE/SW corners, as hypre's rotate7pt) stencil. */
int wl_rotaniso(const wl_grid_t *g, double eps, double theta_deg, int npts, wl_csr_t *a);
/* Smoothed aggregation with 2x2 aggregates of grid g: P = (I - omega D^-1 A) P0,
 * Ac = P^T A P on the coarse grid gc (ceil(nx/2) x ceil(ny/2), same ordering kind). */
int wl_sa_coarsen(const wl_csr_t *a, const wl_grid_t *g, double omega, wl_csr_t *ac, wl_grid_t *gc);
/* n x n, about nnz_row entries per row: the diagonal, then each other entry with probability
 * far_frac anywhere, else within +-band of the diagonal. Deterministic in seed. */
int wl_random_local(int64_t n, int nnz_row, double far_frac, int64_t band, uint64_t seed, wl_csr_t *a);
/* Levels 0..nlevels-1 of the rotated anisotropic hierarchy (level 0 = wl_rotaniso). */
int wl_rotaniso_level(int nx, int ny, double eps, double theta_deg, int npts, int morton, int level,
                      wl_csr_t *a);

/* splitmix64: the generators' and tests' hash. */
static inline uint64_t wl_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Value a rank sends for global id g in iteration t (the tests' expected data). */
static inline uint64_t wl_value(int rank, int64_t g, int t)
{
    return wl_mix(wl_mix(((uint64_t)(uint32_t)rank << 32) ^ (uint64_t)t) ^ (uint64_t)g);
}

#ifndef NB_WORKLOADS_NO_MPI
#include "nb_pattern.h"

/* Pattern of an SpMV y = A x: rows and x entries of row i belong to owner[i] (NULL: balanced
 * block partition of the rows). layout 0: send/recv blocks packed in neighbor order;
 * 1: blocks in reverse order with gaps (exercises displacements). */
int nb_pattern_spmv(const wl_csr_t *a, const int *owner, int size, int rank, int layout, nb_pattern_t *p);

/* Workload table: name -> generator with its parameters (see workloads.c for the syntax).
 * Matrix Market arguments without a '/' are looked up in NB_DATA_DIR (compile-time), or
 * the directory in env MCOLL_NB_DATA. */
extern const nb_workload_t nb_workloads[];
extern const int nb_nworkloads;
const nb_workload_t *nb_workload_find(const char *name);
/* Build a workload given as "kind:args" (e.g. "stencil2d9:64x64", "mtx:file.mtx",
 * "rotaniso:128x128:9:2", "random:4096:8:0.1:1"); also accepts a table name. */
int nb_workload_spec(MPI_Comm comm, const char *spec, nb_pattern_t *p);
#endif
#endif
