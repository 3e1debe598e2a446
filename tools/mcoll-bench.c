/* mcoll-bench: native MPI collectives (PMPI_*) against mcoll's (MPI_*), same buffers, same run.
 *   mpiexec -n N mcoll-bench [--coll LIST] [--min B] [--max B] [--alg LIST] [--validate] ...
 * See --help. The work is in bench_*.c: options, runner table, buffers, timing, output. */
#include "bench.h"
#include "core/topo.h"
#include "shm/shm.h"
#include "mcoll.h"
#include <stdlib.h>
#include <string.h>

typedef struct sweep {
    const bench_opts_t *o;
    int p, rank;
    size_t limit;                /* largest slot a size may need */
} sweep_t;

static size_t next_size(size_t m) { return m ? 2 * m : 1; }

static size_t slot_bytes(const bench_coll_t *bc, size_t m, int p)
{
    size_t elem = bc->reduction ? sizeof(float) : 1, block = m / elem * elem;
    return bench_mem_slot(bench_sbytes(bc, block, p), bench_rbytes(bc, block, p));
}

/* Largest slot over the sweep within the limit: one arena serves every size. */
static size_t largest_slot(const sweep_t *s)
{
    size_t need = 0;
    for (int i = 0; i < s->o->ncolls; i++)
        for (size_t m = s->o->min; m <= s->o->max; m = next_size(m)) {
            size_t b = slot_bytes(bench_coll_at(s->o->colls[i]), m, s->p);
            if (b <= s->limit && b > need) need = b;
        }
    return need;
}

/* Cold runs rotate through at least twice the last-level cache (and two slots). */
static size_t arena_bytes(const sweep_t *s)
{
    mc_topo_t t;
    size_t need = largest_slot(s), llc;
    if (!s->o->cold) return need;
    mc_topo_get(&t);
    llc = t.llc ? t.llc : 32u << 20;
    size_t want = need + 2 * llc > 2 * need ? need + 2 * llc : 2 * need;
    return want < s->o->max_mem ? want : s->o->max_mem;
}

static void library_name(char *out, size_t n)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[len] = 0;
    size_t k = strcspn(lib, "\n,");   /* "Open MPI v4.1.4" / "MPICH Version: 4.0" */
    if (k >= n) k = n - 1;
    memcpy(out, lib, k);
    out[k] = 0;
    for (char *c = out; *c; c++)
        if (*c == '\t') *c = ' ';
}

static void fail(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "mcoll-bench: %s: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* All sizes of one collective (barrier: one row). */
static void run_coll(const sweep_t *s, const bench_coll_t *bc, bench_mem_t *mm, bench_results_t *res)
{
    char var[BENCH_MAX_VARIANTS][BENCH_NAME];
    int nvar = bench_variants(s->o->algs, bc->name, var, BENCH_MAX_VARIANTS);
    int sized = bc->sblocks || bc->rblocks;
    if (!nvar) {
        if (!s->rank) printf("\n# %s: none of '%s' is an algorithm of it; skipped\n", bc->name, s->o->algs);
        return;
    }
    double t0 = MPI_Wtime();
    if (!s->rank) bench_print_header(res, bc);
    for (size_t m = sized ? s->o->min : 0; m <= (sized ? s->o->max : 0); m = next_size(m)) {
        bench_row_t row;
        if (sized && bc->reduction && m < sizeof(float)) continue;
        if (slot_bytes(bc, m, s->p) > mm->bytes) {
            if (!s->rank) printf("# sizes from %zu bytes skipped: buffers exceed --max-mem\n", m);
            break;
        }
        int rc = bench_run_size(s->o, bc, m, mm, var, nvar, &row);
        if (rc) fail(rc, bc->name);
        row.floor_us = res->bw > 0 ? bench_min_volume(bc->name, s->p, row.bytes) / res->bw * 1e6 : 0;
        row.local_us = 0;
        if (s->o->local_copy) {
            size_t out = (size_t)bench_out_share(bc->name, s->p, row.bytes);
            size_t in = bc->inout ? row.bytes : bench_sbytes(bc, row.bytes, s->p);
            row.local_us = out ? bench_local_copy(out, in, out > ((size_t)8 << 20) ? 5 : 15) : 0;
        }
        if (!s->rank) {
            bench_print_row(&row);
            if (bench_results_add(res, &row)) fail(MPI_ERR_NO_MEM, "results");
        }
        if (!sized) break;
    }
    if (!s->rank) printf("# %s: %.1f s\n", bc->name, MPI_Wtime() - t0);
}

static void write_outputs(const bench_results_t *res, const bench_opts_t *o)
{
    if (o->csv && bench_write_csv(res, o->csv)) fprintf(stderr, "mcoll-bench: cannot write %s\n", o->csv);
    if (o->json && bench_write_json(res, o->json)) fprintf(stderr, "mcoll-bench: cannot write %s\n", o->json);
    if (o->plot && bench_plot(res, o->plot)) fprintf(stderr, "mcoll-bench: plotting %s failed\n", o->plot);
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    bench_mem_t mm;
    bench_results_t res = {.o = &o};
    sweep_t s = {.o = &o};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.p);
    int rc = bench_parse_args(argc, argv, s.rank, &o);
    if (rc) {
        MPI_Finalize();
        return rc < 0 ? 2 : 0;
    }
    s.limit = o.cold ? o.max_mem / 2 : o.max_mem;
    size_t skew = (size_t)o.skew * (size_t)s.rank % 64;
    if (bench_mem_init(&mm, arena_bytes(&s), o.cold, o.heap, o.thp, o.apart, skew))
        fail(MPI_ERR_NO_MEM, "buffers");
    res.p = s.p;
    library_name(res.mpi, sizeof res.mpi);
    if (!s.rank)
        printf("# mcoll-bench (mcoll %s) on %s: %d ranks, %s caches, alg %s\n", MCOLL_VERSION,
               res.mpi, s.p, bench_cache_mode(&o), o.algs);
    if (o.roofline) {
        res.bw = bench_copy_bandwidth((size_t)512 << 20 > o.max_mem ? o.max_mem : (size_t)512 << 20);
        if (!s.rank)
            printf("# roofline: node copy bandwidth %.1f GB/s (loads + stores, %d ranks copying at once)\n",
                   res.bw / 1e9, s.p);
        double fx = bench_flag_exchange(s.p > 2 ? 10000 : 100000); /* oversubscribed: slow rounds */
        if (!s.rank && fx > 0)
            printf("# roofline: flag exchange %.3f us per round (%d ranks, bare shared-memory lines: the "
                   "small collectives' floor)\n", fx * 1e6, s.p);
    }
    for (int i = 0; i < o.ncolls; i++) run_coll(&s, bench_coll_at(o.colls[i]), &mm, &res);
    if (!s.rank) {
        /* after the calls: the first collective on a communicator chose it */
        printf("# waits: %d spins before a yield (MCOLL_SHM_SPIN; 4 when a node holds more ranks than online "
               "CPUs)\n", mc_shm_spin_limit());
        write_outputs(&res, &o);
    }
    bench_mem_free(&mm);
    free(res.rows);
    MPI_Finalize();
    return 0;
}
