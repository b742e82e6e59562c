# The viewer model's sources (no GL, no ImGui), one list for every target built from them:
# gpulb_viewer_model (viewer/CMakeLists.txt) and the fuzz targets' own instrumented copies (fuzz/).
set(GPULB_VIEWER_MODEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/trace_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/columns.cpp
  ${CMAKE_CURRENT_LIST_DIR}/series.cpp
  ${CMAKE_CURRENT_LIST_DIR}/replay.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run_span.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ticks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/occupancy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/loads.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compare_span.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_names.cpp
  ${CMAKE_CURRENT_LIST_DIR}/steal_arrows.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rank_transfers.cpp
  ${CMAKE_CURRENT_LIST_DIR}/timeline_layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/heat_scale.cpp
  ${CMAKE_CURRENT_LIST_DIR}/labels.cpp
  ${CMAKE_CURRENT_LIST_DIR}/summary_rows.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compare_layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/counter_tracks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/range_stats.cpp
  ${CMAKE_CURRENT_LIST_DIR}/task_details.cpp
  ${CMAKE_CURRENT_LIST_DIR}/findings.cpp
  ${CMAKE_CURRENT_LIST_DIR}/histogram.cpp
  ${CMAKE_CURRENT_LIST_DIR}/synthetic.cpp
  ${CMAKE_CURRENT_LIST_DIR}/time_format.cpp
  ${CMAKE_CURRENT_LIST_DIR}/display_text.cpp)
