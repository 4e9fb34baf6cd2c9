# Turns report_template.html into a C++ source holding it as one raw string
# (run at build time by src/report/CMakeLists.txt, so the page is edited as
# HTML, never as escaped C++). cmake -DINPUT=... -DOUTPUT=... -P this file.
file(READ "${INPUT}" content)
string(FIND "${content}" ")NDTPL\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string's end marker )NDTPL\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from report_template.html by embed_template.cmake: do not edit.\n"
  "namespace neardup::internal {\n"
  "extern const char kReportTemplate[];\n"
  "const char kReportTemplate[] = R\"NDTPL(${content})NDTPL\";\n"
  "}  // namespace neardup::internal\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
