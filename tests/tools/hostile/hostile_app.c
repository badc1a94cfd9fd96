/* SPDX-License-Identifier: MIT */
/*
 * A program linked against the hostile runtime (hostile_rt.c) and finding
 * it through RUNPATH $ORIGIN, as a downloaded application bundle would.
 * It is inspected by the tests, never run.
 */
int hipRuntimeGetVersion(int *version);

int main(void)
{
	int v = 0;
	return hipRuntimeGetVersion(&v);
}
