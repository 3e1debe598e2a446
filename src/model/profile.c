/* Machine profile: the built-in default, validation, and JSON I/O (libjansson).
 *
 * File format (units: seconds, bytes, bytes/s):
 * {
 *   "format": "mcoll-profile", "version": 1, "name": "...",
 *   "gamma": s/byte, "copy": {"t_copy": B/s, "nt_copy": B/s, "c_copy": B/s (optional)},
 *   "cache": {"l1": B, "l2": B, "l3": B, "adaptive": B (optional)},
 *   "intra": {"hockney": {"alpha": s, "beta": s/B},
 *             "loggp": {"L": s, "o": s, "g": s, "G": s/B},
 *             "plogp": {"L": s, "points": [[m, o_s, o_r, g], ...]}},
 *   "inter": { same as intra },
 *   "nic": {"rate": messages/s, "bw": B/s}     optional: a node's network interface, shared
 *                                              by its ranks (mc_cost_nodes); absent = 0 =
 *                                              not limited
 *   "shm": {"sync": s, "xmap": s, "cma_bw": B/s}  optional: a flag round of the node region,
 *                                              the start-up and rate of a CMA copy (shared-
 *                                              memory algorithms); absent = the built-in values
 * } */
#include "model.h"
#include "../core/config.h"
#include "../core/log.h"
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const model_names[MC_NMODELS] = {"hockney", "loggp", "plogp"};
static const char *const level_names[MC_NLEVELS] = {"intra", "inter"};

const char *mc_model_name(mc_model_t m)
{
    return (unsigned)m < MC_NMODELS ? model_names[m] : "?";
}

int mc_model_from_name(const char *name)
{
    for (int i = 0; name && i < MC_NMODELS; i++)
        if (!strcmp(name, model_names[i])) return i;
    return -1;
}

double mc_plogp_at(const mc_plogp_t *t, const double *ys, double m)
{
    int n = t->n, i = 1;
    if (n <= 0) return 0.0;
    if (n == 1 || m <= t->m[0]) return ys[0];
    while (i < n - 1 && m > t->m[i]) i++;
    double slope = (ys[i] - ys[i - 1]) / (t->m[i] - t->m[i - 1]);
    return ys[i - 1] + (m - t->m[i - 1]) * slope;
}

/* PLogP table of a linear gap g(m) = g0 + m * gb with overheads o(m) = o0 + m * ob, sampled
 * where the default's slopes would change on a real machine (eager/rendezvous switch). */
static void plogp_linear(mc_plogp_t *t, double L, double o0, double ob, double g0, double gb)
{
    static const double pts[] = {0, 1024, 65536, 1048576, 16777216};
    t->L = L;
    t->n = (int)(sizeof pts / sizeof pts[0]);
    for (int i = 0; i < t->n; i++) {
        t->m[i] = pts[i];
        t->os[i] = t->orr[i] = o0 + pts[i] * ob;
        t->g[i] = g0 + pts[i] * gb;
    }
}

/* A flag round trip between two cores is a cache-line transfer each way (~0.1-0.2 us); a
 * process_vm_readv of a few bytes costs a system call plus page-table walks (~1-3 us), and
 * it moves 10-11 GB/s from 4 KiB pages (the Zen 3 VM: 64 KiB-4 MiB that another rank had just
 * written, 1.4 us start-up; shm/cma.c: 10-13 GB/s at 4 MiB, 27-29 from transparent huge
 * pages). It was 20 GB/s, which made CMA the model's choice for the data movers from 64 KiB
 * at 2 ranks, where their trial then staged through the pipe. */
static void shm_default(mc_profile_t *p)
{
    p->shm_sync = 0.2e-6;
    p->xmap = 2.5e-6;
    p->cma_bw = 10e9;
}

/* Constants for the machine class mcoll targets first: a current x86-64 server node (AMD EPYC
 * / Xeon, DDR4/DDR5) running Open MPI or MPICH over shared memory within the node and a
 * 100 Gb/s-class network between nodes. They are typical published magnitudes, NOT
 * measurements of this host; `mcoll-tune params` (later) writes a measured profile.
 * gamma is a fold's rate within the caches, where the folds of the algorithms run (its
 * operands' traffic beyond them is in the copy rates and the data-access volumes): vectorized
 * kernels sum doubles at 20-36 GB/s there (out = a + b, 16 KiB-4 MiB, AVX2, Zen 3; mcoll-tune
 * params measured MPI_Reduce_local at 26.5 GB/s on 1 MiB). It was 4 GB/s, a scalar fold's
 * rate, which priced the folds 5x too high: the scans' costs leaned on it for the slots their
 * folds read (now counted), and the model chose among the reductions as if folds, not the
 * hand-overs, made their time. */
void mc_profile_default(mc_profile_t *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "builtin-x86_64-node");
    p->gamma = 1.0 / 20e9; /* MPI_SUM of doubles within the caches, one core, vectorized */
    p->t_copy = 8e9;      /* memcpy through the caches, one core */
    p->nt_copy = 11e9;    /* streaming stores, one core */
    p->c_copy = 25e9;     /* memcpy of data in another core's caches */
    p->l1 = 32768, p->l2 = 512 * 1024, p->l3 = 32.0 * 1024 * 1024;
    shm_default(p);
    mc_net_t *a = &p->net[MC_LEVEL_INTRA], *e = &p->net[MC_LEVEL_INTER];
    a->hockney = (mc_hockney_t){.alpha = 0.5e-6, .beta = 1.0 / 6e9};
    a->loggp = (mc_loggp_t){.L = 0.2e-6, .o = 0.15e-6, .g = 0.25e-6, .G = 1.0 / 6e9};
    plogp_linear(&a->plogp, 0.25e-6, 0.15e-6, 0.5 / 6e9, 0.25e-6, 1.0 / 6e9);
    e->hockney = (mc_hockney_t){.alpha = 2.0e-6, .beta = 1.0 / 11e9};
    e->loggp = (mc_loggp_t){.L = 1.2e-6, .o = 0.3e-6, .g = 0.5e-6, .G = 1.0 / 11e9};
    plogp_linear(&e->plogp, 1.5e-6, 0.3e-6, 0.2 / 11e9, 0.5e-6, 1.0 / 11e9);
}

#define fail mc_errmsg

static int bad(double v)
{
    return !isfinite(v) || v < 0;
}

static int check_plogp(const mc_plogp_t *t, const char *lv, char *err, size_t n)
{
    if (bad(t->L)) return fail(err, n, "%s.plogp.L must be a finite number >= 0", lv);
    if (t->n < 1 || t->n > MC_PLOGP_MAXPTS)
        return fail(err, n, "%s.plogp.points needs 1..%d points, has %d", lv, MC_PLOGP_MAXPTS, t->n);
    for (int i = 0; i < t->n; i++) {
        if (bad(t->m[i]) || bad(t->os[i]) || bad(t->orr[i]) || bad(t->g[i]))
            return fail(err, n, "%s.plogp.points[%d]: values must be finite numbers >= 0", lv, i);
        if (i && t->m[i] <= t->m[i - 1])
            return fail(err, n, "%s.plogp.points[%d]: message sizes must increase strictly", lv, i);
        /* the gap bounds both overheads (paper §3.1); a tiny slack absorbs measurement noise */
        if (t->g[i] * 1.05 < t->os[i] || t->g[i] * 1.05 < t->orr[i])
            return fail(err, n, "%s.plogp.points[%d]: g(m) must be >= o_s(m) and o_r(m)", lv, i);
    }
    return 0;
}

int mc_profile_validate(const mc_profile_t *p, char *err, size_t n)
{
    if (bad(p->gamma)) return fail(err, n, "gamma must be a finite number >= 0");
    if (bad(p->t_copy) || bad(p->nt_copy) || bad(p->c_copy)) return fail(err, n, "copy bandwidths must be finite numbers >= 0");
    if (bad(p->l1) || bad(p->l2) || bad(p->l3) || bad(p->adapt_c))
        return fail(err, n, "cache sizes must be finite numbers >= 0");
    if (bad(p->nic_rate) || bad(p->nic_bw)) return fail(err, n, "nic: rate and bw must be finite numbers >= 0");
    if (bad(p->shm_sync) || bad(p->xmap) || bad(p->cma_bw))
        return fail(err, n, "shm: sync, xmap and cma_bw must be finite numbers >= 0");
    for (int l = 0; l < MC_NLEVELS; l++) {
        const mc_net_t *x = &p->net[l];
        const char *lv = level_names[l];
        if (bad(x->hockney.alpha) || bad(x->hockney.beta))
            return fail(err, n, "%s.hockney: alpha and beta must be finite numbers >= 0", lv);
        if (bad(x->loggp.L) || bad(x->loggp.o) || bad(x->loggp.g) || bad(x->loggp.G))
            return fail(err, n, "%s.loggp: L, o, g, G must be finite numbers >= 0", lv);
        if (check_plogp(&x->plogp, lv, err, n)) return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- JSON reading */
typedef struct rd {
    char *err;
    size_t n;
    int rc;
} rd_t;

/* A required number at obj[key]; path names it in the error. */
static double num(rd_t *r, json_t *obj, const char *path, const char *key)
{
    json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    if (r->rc) return 0;
    if (!json_is_number(v)) {
        r->rc = fail(r->err, r->n, "%s%s%s: missing or not a number", path, *path ? "." : "", key);
        return 0;
    }
    return json_number_value(v);
}

static json_t *obj(rd_t *r, json_t *parent, const char *path, const char *key)
{
    json_t *v = json_is_object(parent) ? json_object_get(parent, key) : NULL;
    if (!r->rc && !json_is_object(v))
        r->rc = fail(r->err, r->n, "%s%s%s: missing or not an object", path, *path ? "." : "", key);
    return v;
}

static void read_points(rd_t *r, json_t *pl, const char *lv, mc_plogp_t *t)
{
    json_t *pts = json_is_object(pl) ? json_object_get(pl, "points") : NULL;
    if (r->rc) return;
    if (!json_is_array(pts) || json_array_size(pts) < 1 || json_array_size(pts) > MC_PLOGP_MAXPTS) {
        r->rc = fail(r->err, r->n, "%s.plogp.points: must be an array of 1..%d [m, o_s, o_r, g] rows", lv,
                     MC_PLOGP_MAXPTS);
        return;
    }
    t->n = (int)json_array_size(pts);
    for (int i = 0; i < t->n; i++) {
        json_t *row = json_array_get(pts, (size_t)i);
        double v[4];
        for (int k = 0; k < 4; k++) {
            json_t *x =
                json_is_array(row) && json_array_size(row) == 4 ? json_array_get(row, (size_t)k) : NULL;
            if (!json_is_number(x)) {
                r->rc = fail(r->err, r->n, "%s.plogp.points[%d]: must be [m, o_s, o_r, g] numbers", lv, i);
                return;
            }
            v[k] = json_number_value(x);
        }
        t->m[i] = v[0], t->os[i] = v[1], t->orr[i] = v[2], t->g[i] = v[3];
    }
}

static void read_net(rd_t *r, json_t *root, int l, mc_net_t *x)
{
    const char *lv = level_names[l];
    char path[32];
    json_t *net = obj(r, root, "", lv);
    snprintf(path, sizeof path, "%s.hockney", lv);
    json_t *h = obj(r, net, lv, "hockney");
    x->hockney.alpha = num(r, h, path, "alpha");
    x->hockney.beta = num(r, h, path, "beta");
    snprintf(path, sizeof path, "%s.loggp", lv);
    json_t *g = obj(r, net, lv, "loggp");
    x->loggp =
        (mc_loggp_t){num(r, g, path, "L"), num(r, g, path, "o"), num(r, g, path, "g"), num(r, g, path, "G")};
    snprintf(path, sizeof path, "%s.plogp", lv);
    json_t *pl = obj(r, net, lv, "plogp");
    x->plogp.L = num(r, pl, path, "L");
    read_points(r, pl, lv, &x->plogp);
}

static void read_profile(rd_t *r, json_t *root, mc_profile_t *p)
{
    json_t *fmt = json_object_get(root, "format"), *name = json_object_get(root, "name");
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), "mcoll-profile")) {
        r->rc = fail(r->err, r->n, "format: must be \"mcoll-profile\"");
        return;
    }
    if (num(r, root, "", "version") != 1 && !r->rc) r->rc = fail(r->err, r->n, "version: only 1 is known");
    snprintf(p->name, sizeof p->name, "%s", json_is_string(name) ? json_string_value(name) : "unnamed");
    p->gamma = num(r, root, "", "gamma");
    json_t *c = obj(r, root, "", "copy"), *k = obj(r, root, "", "cache");
    p->t_copy = num(r, c, "copy", "t_copy");
    p->nt_copy = num(r, c, "copy", "nt_copy");
    if (json_is_object(c) && json_object_get(c, "c_copy")) p->c_copy = num(r, c, "copy", "c_copy");
    p->l1 = num(r, k, "cache", "l1");
    p->l2 = num(r, k, "cache", "l2");
    p->l3 = num(r, k, "cache", "l3");
    if (json_is_object(k) && json_object_get(k, "adaptive")) p->adapt_c = num(r, k, "cache", "adaptive");
    for (int l = 0; l < MC_NLEVELS; l++) read_net(r, root, l, &p->net[l]);
    json_t *nic = json_object_get(root, "nic");
    if (nic) {
        p->nic_rate = num(r, nic, "nic", "rate");
        p->nic_bw = num(r, nic, "nic", "bw");
    }
    json_t *shm = json_object_get(root, "shm");
    shm_default(p);
    if (shm) {
        p->shm_sync = num(r, shm, "shm", "sync");
        p->xmap = num(r, shm, "shm", "xmap");
        p->cma_bw = num(r, shm, "shm", "cma_bw");
    }
}

int mc_profile_load(const char *path, mc_profile_t *out, char *err, size_t n)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) return fail(err, n, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    mc_profile_t p;
    memset(&p, 0, sizeof p);
    rd_t r = {err, n, 0};
    char why[200];
    if (!json_is_object(root))
        r.rc = fail(err, n, "%s: top level must be an object", path);
    else
        read_profile(&r, root, &p);
    json_decref(root);
    if (r.rc) {
        snprintf(why, sizeof why, "%s", err ? err : "");
        return fail(err, n, "%s: %s", path, why);
    }
    if (mc_profile_validate(&p, why, sizeof why)) return fail(err, n, "%s: %s", path, why);
    *out = p;
    return 0;
}

/* ---------------------------------------------------------------- JSON writing */
static json_t *net_json(const mc_net_t *x)
{
    json_t *pts = json_array();
    for (int i = 0; i < x->plogp.n; i++)
        json_array_append_new(
            pts, json_pack("[ffff]", x->plogp.m[i], x->plogp.os[i], x->plogp.orr[i], x->plogp.g[i]));
    return json_pack("{s:{s:f,s:f},s:{s:f,s:f,s:f,s:f},s:{s:f,s:o}}", "hockney", "alpha", x->hockney.alpha,
                     "beta", x->hockney.beta, "loggp", "L", x->loggp.L, "o", x->loggp.o, "g", x->loggp.g, "G",
                     x->loggp.G, "plogp", "L", x->plogp.L, "points", pts);
}

int mc_profile_save(const char *path, const mc_profile_t *p, char *err, size_t n)
{
    char why[200];
    if (mc_profile_validate(p, why, sizeof why))
        return fail(err, n, "refusing to write an invalid profile: %s", why);
    json_t *root =
        json_pack("{s:s,s:i,s:s,s:f,s:{s:f,s:f},s:{s:f,s:f,s:f},s:o,s:o}", "format", "mcoll-profile",
                  "version", 1, "name", p->name, "gamma", p->gamma, "copy", "t_copy", p->t_copy, "nt_copy",
                  p->nt_copy, "cache", "l1", p->l1, "l2", p->l2, "l3", p->l3, "intra",
                  net_json(&p->net[MC_LEVEL_INTRA]), "inter", net_json(&p->net[MC_LEVEL_INTER]));
    if (root && (p->nic_rate > 0 || p->nic_bw > 0))
        json_object_set_new(root, "nic", json_pack("{s:f,s:f}", "rate", p->nic_rate, "bw", p->nic_bw));
    if (root && p->c_copy > 0) json_object_set_new(json_object_get(root, "copy"), "c_copy", json_real(p->c_copy));
    if (root && p->adapt_c > 0) json_object_set_new(json_object_get(root, "cache"), "adaptive", json_real(p->adapt_c));
    if (root) json_object_set_new(root, "shm", json_pack("{s:f,s:f,s:f}", "sync", p->shm_sync, "xmap", p->xmap, "cma_bw", p->cma_bw));
    if (!root) return fail(err, n, "%s: out of memory building the JSON document", path);
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(root);
    return rc ? fail(err, n, "%s: cannot write the file", path) : 0;
}

/* ---------------------------------------------------------------- the process's profile */
static mc_profile_t active;
static pthread_once_t active_once = PTHREAD_ONCE_INIT;

static void active_load(void)
{
    const char *path = mc_cfg()->profile;
    char err[512];
    mc_profile_default(&active);
    if (*path && mc_profile_load(path, &active, err, sizeof err)) {
        mc_warn("MCOLL_PROFILE ignored, using the built-in profile: %s", err);
        mc_profile_default(&active);
    }
}

const mc_profile_t *mc_profile_active(void)
{
    pthread_once(&active_once, active_load);
    return &active;
}

double mc_profile_capacity(const mc_profile_t *prof, int p)
{
    return prof->adapt_c > 0 ? prof->adapt_c : prof->l3 + prof->l2 * (p > 0 ? p : 1);
}
