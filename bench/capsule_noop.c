/* bench/capsule_noop.c: the static no-op the capsule benchmark runs
 * unconfined, under bubblewrap and in a capsule. */
int main(void)
{
	return 0;
}
