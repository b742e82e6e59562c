// gpulb: the command line over the shipped scenarios and policies (cli.cpp holds the commands).
#include "gpulb/builtin/registry.hpp"
#include "gpulb/tools/cli.hpp"

int main(int argc, char** argv) {
  return gpulb::tools::cli_main(argc, argv, gpulb::builtin::registry());
}
