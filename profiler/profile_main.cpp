// Placeholder until the CLI lands; replaced by its owner.
#include <cstdio>
int main() {
  std::fputs("not built yet\n", stderr);
  return 1;
}
