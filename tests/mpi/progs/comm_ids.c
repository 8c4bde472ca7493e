/* comm_ids.c: makes communicators every way MPI offers (dup, nested dup,
 * split by colour and with MPI_UNDEFINED, split_type, create, create_group
 * twice with one tag and once with another, idup, intercomm_create, merge,
 * dup of an intercommunicator, cart_create/cart_sub, dist_graph,
 * dup_with_info) and checks, when the shim is preloaded, that
 *   - every member of a communicator gets the same job-wide id,
 *   - the communicators one process holds have distinct ids,
 *   - across the job, one id always means one set of members.
 * It also prints, from rank 0, what each communicator looks like (sizes,
 * ranks, sums of an allreduce): that output must be the same with and
 * without the shim. */
#include "testutil.h"

#define MAX_COMMS 32

struct tracked {
	const char *name;
	MPI_Comm comm;
};

static struct tracked comms[MAX_COMMS];
static int ncomms;

static void add(const char *name, MPI_Comm comm)
{
	comms[ncomms].name = name;
	comms[ncomms].comm = comm;
	ncomms++;
}

/* An order-independent summary of who is in comm (both groups). */
static uint64_t signature(MPI_Comm comm)
{
	MPI_Group g, wg;
	int inter, n, world_size;
	uint64_t sig = 0;

	MPI_Comm_size(MPI_COMM_WORLD, &world_size);
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	MPI_Comm_test_inter(comm, &inter);
	for (int side = 0; side <= inter; side++) {
		if (side == 0)
			MPI_Comm_group(comm, &g);
		else
			MPI_Comm_remote_group(comm, &g);
		MPI_Group_size(g, &n);
		int *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
		for (int i = 0; i < n; i++)
			in[i] = i;
		MPI_Group_translate_ranks(g, n, in, wg, out);
		for (int i = 0; i < n; i++)
			sig |= UINT64_C(1) << (out[i] % 64);
		sig += (uint64_t)(n + 1) << (side ? 56 : 48);
		free(in);
		free(out);
		MPI_Group_free(&g);
	}
	MPI_Group_free(&wg);
	(void)world_size;
	return sig;
}

int main(int argc, char **argv)
{
	int rank, size;
	int expect_shim = tu_has_arg(argc, argv, "--expect-shim");

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 4 || size > 64) {
		if (rank == 0)
			fprintf(stderr, "comm_ids needs 4 to 64 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}

	MPI_Comm d1, d2, d3, s, ss, und, st, cr, cg1, cg2, cg3, idup, inter, merged, interdup,
		cart, cartsub, graph, dwi;
	MPI_Group wg, half;
	MPI_Request req;

	add("world", MPI_COMM_WORLD);
	add("self", MPI_COMM_SELF);
	MPI_Comm_dup(MPI_COMM_WORLD, &d1);
	add("dup", d1);
	MPI_Comm_dup(d1, &d2);
	add("dup-of-dup", d2);
	MPI_Comm_dup(d1, &d3);
	add("second-dup", d3);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &s);
	add("split-parity", s);
	MPI_Comm_split(s, rank % 3 == 0, rank, &ss);
	add("split-of-split", ss);
	MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, rank, &und);
	if (und != MPI_COMM_NULL)
		add("split-undefined", und);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &st);
	add("split-type", st);

	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	int range[1][3] = { { 0, size - 1, 2 } };
	MPI_Group even;
	MPI_Group_range_incl(wg, 1, range, &even);
	MPI_Comm_create(MPI_COMM_WORLD, even, &cr);
	if (cr != MPI_COMM_NULL)
		add("create-even", cr);
	MPI_Group_free(&even);

	int half_range[1][3] = { { 0, size / 2 - 1, 1 } };
	MPI_Group_range_incl(wg, 1, half_range, &half);
	if (rank < size / 2) {
		MPI_Comm_create_group(MPI_COMM_WORLD, half, 7, &cg1);
		add("create-group", cg1);
		MPI_Comm_create_group(MPI_COMM_WORLD, half, 7, &cg2);
		add("create-group-again", cg2);
		MPI_Comm_create_group(MPI_COMM_WORLD, half, 8, &cg3);
		add("create-group-tag8", cg3);
	}
	MPI_Group_free(&half);
	MPI_Group_free(&wg);

	MPI_Comm_idup(d1, &idup, &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	add("idup", idup);

	/* Evens and odds; s orders each side by descending world rank, so the
	 * leaders (local rank 0) are the highest even and odd world ranks. */
	int top_even = (size - 1) % 2 ? size - 2 : size - 1, top_odd = (size - 1) % 2 ? size - 1 : size - 2;
	MPI_Intercomm_create(s, 0, MPI_COMM_WORLD, rank % 2 ? top_even : top_odd, 99, &inter);
	add("intercomm", inter);
	MPI_Intercomm_merge(inter, rank % 2, &merged);
	add("merged", merged);
	MPI_Comm_dup(inter, &interdup);
	add("intercomm-dup", interdup);

	int dims[2] = { 0, 0 }, periods[2] = { 1, 0 }, remain[2] = { 1, 0 };
	MPI_Dims_create(size, 2, dims);
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
	add("cart", cart);
	MPI_Cart_sub(cart, remain, &cartsub);
	add("cart-sub", cartsub);

	int src = (rank + size - 1) % size, dst = (rank + 1) % size;
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst,
				       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
	add("dist-graph", graph);
	MPI_Comm_dup_with_info(s, MPI_INFO_NULL, &dwi);
	add("dup-with-info", dwi);

	/* What the application sees: the same with or without the shim. */
	int nlines = ncomms * 3;
	int *mine = calloc(MAX_COMMS * 3, sizeof *mine);
	for (int k = 0; k < ncomms; k++) {
		int inter_flag, csize, crank, sum = 0, one = rank;
		MPI_Comm_test_inter(comms[k].comm, &inter_flag);
		MPI_Comm_size(comms[k].comm, &csize);
		MPI_Comm_rank(comms[k].comm, &crank);
		MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comms[k].comm);
		mine[3 * k] = csize;
		mine[3 * k + 1] = crank;
		mine[3 * k + 2] = sum;
	}
	int *all = rank == 0 ? malloc((size_t)size * MAX_COMMS * 3 * sizeof *all) : NULL;
	int *counts = rank == 0 ? malloc((size_t)size * sizeof *counts) : NULL;
	MPI_Gather(&ncomms, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Gather(mine, MAX_COMMS * 3, MPI_INT, all, MAX_COMMS * 3, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		for (int r = 0; r < size; r++)
			for (int k = 0; k < counts[r]; k++)
				printf("rank %d comm %d: size %d rank %d sum %d\n", r, k,
				       all[(r * MAX_COMMS + k) * 3], all[(r * MAX_COMMS + k) * 3 + 1],
				       all[(r * MAX_COMMS + k) * 3 + 2]);
	}
	(void)nlines;

	/* The ids, when the shim is there. */
	tu_comm_id_fn comm_id = tu_comm_id();
	if (expect_shim) {
		TU_CHECK(comm_id && tu_shim_active(), "the shim is not active");
		uint64_t ids[MAX_COMMS], sigs[MAX_COMMS];
		for (int k = 0; k < ncomms; k++) {
			ids[k] = 0;
			TU_CHECK(comm_id && comm_id(comms[k].comm, &ids[k]) == 0, "%s has no id",
				 comms[k].name);
			sigs[k] = signature(comms[k].comm);
			uint64_t lo, hi;
			MPI_Allreduce(&ids[k], &lo, 1, MPI_UINT64_T, MPI_MIN, comms[k].comm);
			MPI_Allreduce(&ids[k], &hi, 1, MPI_UINT64_T, MPI_MAX, comms[k].comm);
			TU_CHECK(lo == ids[k] && hi == ids[k],
				 "%s: members disagree on the id (mine %016llx, min %016llx, max %016llx)",
				 comms[k].name, (unsigned long long)ids[k], (unsigned long long)lo,
				 (unsigned long long)hi);
			for (int j = 0; j < k; j++)
				TU_CHECK(ids[j] != ids[k], "%s and %s share id %016llx", comms[j].name,
					 comms[k].name, (unsigned long long)ids[k]);
		}
		TU_CHECK(ids[0] == 1, "MPI_COMM_WORLD's id is %016llx, not 1", (unsigned long long)ids[0]);
		/* One id, one set of members, across the whole job. */
		uint64_t pairs[MAX_COMMS * 2] = { 0 };
		for (int k = 0; k < ncomms; k++) {
			pairs[2 * k] = ids[k];
			pairs[2 * k + 1] = sigs[k];
		}
		uint64_t *allp = rank == 0 ? malloc((size_t)size * MAX_COMMS * 2 * sizeof *allp) : NULL;
		MPI_Gather(pairs, MAX_COMMS * 2, MPI_UINT64_T, allp, MAX_COMMS * 2, MPI_UINT64_T, 0,
			   MPI_COMM_WORLD);
		if (rank == 0) {
			int n = size * MAX_COMMS;
			for (int a = 0; a < n; a++)
				for (int b = a + 1; b < n; b++)
					if (allp[2 * a] && allp[2 * a] == allp[2 * b])
						TU_CHECK(allp[2 * a + 1] == allp[2 * b + 1],
							 "id %016llx names two different sets of members",
							 (unsigned long long)allp[2 * a]);
			free(allp);
		}
	} else if (tu_has_arg(argc, argv, "--expect-no-shim")) {
		TU_CHECK(!tu_shim_active(), "the shim is active");
	}

	MPI_Comm to_free[] = { d1, d2, d3, s, ss, und, st, cr, idup, inter, merged, interdup, cart, cartsub, graph, dwi };
	for (size_t i = 0; i < sizeof to_free / sizeof to_free[0]; i++)
		if (to_free[i] != MPI_COMM_NULL)
			MPI_Comm_free(&to_free[i]);
	if (rank < size / 2) {
		MPI_Comm_free(&cg1);
		MPI_Comm_free(&cg2);
		MPI_Comm_free(&cg3);
	}
	if (expect_shim) {
		uint64_t id;
		TU_CHECK(comm_id(d1, &id) == -1, "a freed communicator still has an id");
	}
	free(mine);
	free(all);
	free(counts);
	return tu_finish();
}
