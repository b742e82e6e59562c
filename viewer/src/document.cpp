#include "document.hpp"

#include "gpulb/tracing/trace_file.hpp"

namespace gpulb::viewer {

std::unique_ptr<Document> make_document(trace::Trace trace, std::string title) {
  auto doc = std::make_unique<Document>();
  doc->title = std::move(title);
  doc->model =
      std::make_shared<const TraceModel>(std::make_shared<const trace::Trace>(std::move(trace)));
  doc->findings = compute_findings(*doc->model);
  return doc;
}

std::unique_ptr<Document> load_document(const std::filesystem::path& path) {
  auto doc = make_document(trace::read_trace(path), path.filename().string());
  doc->source = path.string();
  return doc;
}

}  // namespace gpulb::viewer
