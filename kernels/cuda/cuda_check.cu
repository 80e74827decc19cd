#include "kernels/cuda/cuda_check.hpp"

#include <vector>

#include <fmt/format.h>

namespace mdsim::cuda {

namespace {
std::atomic<std::size_t> g_transfers{0};
}

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw RuntimeError(fmt::format("CUDA error {} ({}) in {} at {}:{}", cudaGetErrorName(err), cudaGetErrorString(err),
                                 call, file, line));
}

std::size_t transfer_count() { return g_transfers.load(); }
void count_transfer() { g_transfers.fetch_add(1); }

int count_kernel_nodes(cudaGraph_t graph) {
  std::size_t count = 0;
  MDSIM_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  if (count > 0) MDSIM_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  int kernels = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    MDSIM_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    kernels += type == cudaGraphNodeTypeKernel;
  }
  return kernels;
}

cudaError_t instantiate_graph(cudaGraphExec_t* exec, cudaGraph_t graph) {
  return cudaGraphInstantiateWithFlags(exec, graph, cudaGraphInstantiateFlagUseNodePriority);
}

}  // namespace mdsim::cuda
