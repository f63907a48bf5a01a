// A plugin kernel on the CUDA backend: shapescope's synthetic operands filled in device
// memory by the same fillers our kernels use, at the layout the plugin asked for; its
// run() enqueues on the device's current stream and is timed and checked like ours.
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/plugin_kernels.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels {

namespace {

using cuda::DeviceBuffer;
using synthetic::Stream;

cuda::ScaleStrides strides_of(const PluginScaleLayout& layout) { return {layout.batch, layout.outer, layout.kgroup}; }

// Codes or bf16 bits of A or B, row-major [batch][rows][k].
DeviceBuffer<uint8_t> filled_operand(bool fp8, uint64_t seed, Stream codes, Stream bf16, int64_t batch, int64_t rows,
                                     int64_t k, cudaStream_t stream) {
  DeviceBuffer<uint8_t> buffer(std::size_t(batch * rows * k * (fp8 ? 1 : 2)));
  if (fp8) {
    cuda::fill_fp8_codes(buffer.data(), seed, codes, batch, rows, k, stream);
  } else {
    cuda::fill_bf16_values(reinterpret_cast<uint16_t*>(buffer.data()), seed, bf16, batch, rows, k, stream);
  }
  return buffer;
}

template <typename T>
DeviceBuffer<T> uploaded(const std::vector<T>& values, cudaStream_t stream) {
  DeviceBuffer<T> buffer(values.size());
  if (!values.empty()) {
    CUDA_CHECK(cudaMemcpyAsync(buffer.data(), values.data(), buffer.bytes(), cudaMemcpyHostToDevice, stream));
  }
  return buffer;
}

// An ABI version 2 operand (codes, one-byte scale codes, per-tensor scales) in device memory.
struct DeviceCodedOperand {
  DeviceBuffer<uint8_t> codes, scale_codes;
  DeviceBuffer<float> tensor_scales;
};

DeviceCodedOperand coded_operand(const OperandEncoding& encoding, const synthetic::OperandStreams& streams,
                                 uint64_t seed, int64_t batch_count, int64_t rows, int64_t k, cudaStream_t stream) {
  const PluginHostOperand host = plugin_host_operand(encoding, streams, seed, batch_count, rows, k);
  DeviceCodedOperand device{uploaded(host.codes, stream), uploaded(host.scale_codes, stream),
                            uploaded(host.tensor_scales, stream)};
  CUDA_CHECK(cudaStreamSynchronize(stream));  // the host vectors die here
  return device;
}

template <typename T>
const T* data_or_null(const DeviceBuffer<T>& buffer) {
  return buffer.size() == 0 ? nullptr : buffer.data();
}

struct PluginDeviceWeights {
  WeightShape shape;
  uint64_t seed = 0;
  DeviceBuffer<uint8_t> b;
  DeviceBuffer<float> b_scales;
  DeviceCodedOperand b_coded;  // ABI version 2 formats (b stays empty)
};

class PluginCudaGemm final : public cuda::CudaPreparedGemm {
 public:
  PluginCudaGemm(cuda::CudaDevice& device, std::shared_ptr<PluginKernel> kernel, const PluginDeviceWeights& weights,
                 int64_t m, uint64_t seed)
      : CudaPreparedGemm(device, {kernel->format, {m, weights.shape.n, weights.shape.k, weights.shape.batch_count},
                                  seed, weights.seed}),
        kernel_(std::move(kernel)) {
    const GemmShape& s = problem().shape;
    const cudaStream_t stream = device.stream();
    const bool coded = uses_scale_codes(kernel_->format);
    const bool fp8_a = kernel_->format == OperandFormat::fp8_blockscale;
    if (coded) {
      a_coded_ = coded_operand(operand_encodings(kernel_->format).a, synthetic::kAStreams, seed, s.batch_count, m,
                               s.k, stream);
    } else {
      a_ = filled_operand(fp8_a, seed, Stream::a_codes, Stream::a_bf16, s.batch_count, m, s.k, stream);
    }
    if (fp8_a) {
      const PluginScaleLayout layout = plugin_a_scale_layout(s, kernel_->abi.flags);
      a_scales_ = DeviceBuffer<float>(std::size_t(layout.floats));
      cuda::fill_a_scales(a_scales_.data(), seed, s.batch_count, m, s.k, strides_of(layout), stream);
    }
    c_ = DeviceBuffer<uint16_t>(std::size_t(s.batch_count * m * s.n));
    cuda::poison_bf16(c_.data(), int64_t(c_.size()), stream);
    set_output(c_.data(), int64_t(c_.size()), cuda::OutputStrides{m * s.n, s.n, 1});
    CUDA_CHECK(cudaStreamSynchronize(stream));
    operands_.shape = {s.m, s.n, s.k, s.batch_count};
    operands_.a = coded ? a_coded_.codes.data() : a_.data();
    operands_.a_scales = data_or_null(a_scales_);
    operands_.b = coded ? weights.b_coded.codes.data() : weights.b.data();
    operands_.b_scales = data_or_null(weights.b_scales);
    operands_.a_scale_codes = data_or_null(a_coded_.scale_codes);
    operands_.b_scale_codes = data_or_null(weights.b_coded.scale_codes);
    operands_.a_tensor_scales = data_or_null(a_coded_.tensor_scales);
    operands_.b_tensor_scales = data_or_null(weights.b_coded.tensor_scales);
    operands_.c = c_.data();
    operands_.stream = stream;
    handle_ = plugin_prepare(*kernel_, operands_);
  }
  ~PluginCudaGemm() override {
    cudaStreamSynchronize(device_.stream());
    plugin_release(*kernel_, handle_);
  }
  PluginCudaGemm(const PluginCudaGemm&) = delete;
  PluginCudaGemm& operator=(const PluginCudaGemm&) = delete;

  void run() override {
    operands_.stream = device_.stream();  // verify-plans may redirect runs to another stream
    plugin_run(*kernel_, handle_, operands_);
  }
  std::string launch_name() const override { return plugin_launch_name(*kernel_, handle_); }

 private:
  std::shared_ptr<PluginKernel> kernel_;
  DeviceBuffer<uint8_t> a_;
  DeviceBuffer<float> a_scales_;
  DeviceCodedOperand a_coded_;
  DeviceBuffer<uint16_t> c_;
  shapescope_operands operands_{};
  void* handle_ = nullptr;
};

class PluginCudaSession final : public GemmSession {
 public:
  PluginCudaSession(cuda::CudaDevice& device, std::shared_ptr<PluginKernel> kernel, const WeightShape& shape,
                    uint64_t seed)
      : device_(device), kernel_(std::move(kernel)) {
    const cudaStream_t stream = device.stream();
    weights_.shape = shape;
    weights_.seed = seed;
    if (uses_scale_codes(kernel_->format)) {
      weights_.b_coded = coded_operand(operand_encodings(kernel_->format).b, synthetic::kBStreams, seed,
                                       shape.batch_count, shape.n, shape.k, stream);
      return;
    }
    const bool fp8_b = kernel_->format != OperandFormat::bf16;
    weights_.b = filled_operand(fp8_b, seed, Stream::b_codes, Stream::b_bf16, shape.batch_count, shape.n, shape.k,
                                stream);
    if (fp8_b) {
      const PluginScaleLayout layout = plugin_b_scale_layout(shape, kernel_->abi.flags);
      weights_.b_scales = DeviceBuffer<float>(std::size_t(layout.floats));
      CUDA_CHECK(cudaMemsetAsync(weights_.b_scales.data(), 0, weights_.b_scales.bytes(), stream));  // padding: 0
      cuda::fill_b_scales(weights_.b_scales.data(), seed, shape.batch_count, shape.n, shape.k, strides_of(layout),
                          stream);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  std::size_t activation_bytes(int64_t m) const override {
    return plugin_activation_bytes(weights_.shape, kernel_->format, m);
  }

  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    return std::make_unique<PluginCudaGemm>(device_, kernel_, weights_, m, seed);
  }

 private:
  cuda::CudaDevice& device_;
  std::shared_ptr<PluginKernel> kernel_;
  PluginDeviceWeights weights_;
};

}  // namespace

std::unique_ptr<GemmSession> open_cuda_plugin_session(const std::shared_ptr<PluginKernel>& kernel, Device& device,
                                                      const WeightShape& shape, uint64_t seed) {
  return std::make_unique<PluginCudaSession>(cuda::as_cuda_device(device), kernel, shape, seed);
}

}  // namespace shapescope::kernels
