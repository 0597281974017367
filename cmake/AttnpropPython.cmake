# The Python module `attnprop` (python/binding): pybind11 (Debian pybind11-dev) for
# /usr/bin/python3, built when pybind11 is found (option ATTNPROP_PYTHON). The package lands in
# BUILD/python/attnprop (PYTHONPATH=BUILD/python) and is installed next to attnprop_torch,
# PREFIX/share/attnprop/python.
set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH
    "The interpreter the Python module is built for (Debian's, with python3-torch)")
find_package(Python3 QUIET COMPONENTS Interpreter Development.Module)
if(Python3_FOUND)
  find_package(pybind11 2.10 CONFIG QUIET)
endif()
# Off by default in the sanitizer builds: the module would need the sanitizers' runtime
# preloaded into /usr/bin/python3.
if(pybind11_FOUND AND NOT ATTNPROP_SANITIZE AND NOT ATTNPROP_FUZZ)
  set(_attnprop_python_default ON)
else()
  set(_attnprop_python_default OFF)
endif()
# A cache of an older configuration held the tests' interpreter under this name.
get_property(_attnprop_python_type CACHE ATTNPROP_PYTHON PROPERTY TYPE)
if(_attnprop_python_type STREQUAL "FILEPATH")
  unset(ATTNPROP_PYTHON CACHE)
endif()
option(ATTNPROP_PYTHON "Build the Python module attnprop (needs pybind11-dev and python3-dev)"
       ${_attnprop_python_default})
if(ATTNPROP_PYTHON AND NOT pybind11_FOUND)
  message(FATAL_ERROR "ATTNPROP_PYTHON is ON but pybind11 was not found for ${Python3_EXECUTABLE} "
                      "(Debian: pybind11-dev python3-dev); configure with -DATTNPROP_PYTHON=OFF")
endif()
message(STATUS "attnprop: Python module ${ATTNPROP_PYTHON}")
if(NOT ATTNPROP_PYTHON)
  return()
endif()

# The module is a shared object: the libraries it links are compiled position independent
# (-fPIC costs nothing measurable beside the PIE code the compiler makes by default). The
# property engine (attnprop_props) is not among them: Debian's librapidcheck.a is not position
# independent, so check and replay run in the attnprop executable the module names
# (attnprop._core.binaries).
set_target_properties(attnprop_numeric attnprop_core PROPERTIES POSITION_INDEPENDENT_CODE ON)

set(ATTNPROP_PYTHON_DIR ${PROJECT_BINARY_DIR}/python/attnprop)
pybind11_add_module(attnprop_python MODULE python/binding/core.cpp)
set_target_properties(attnprop_python PROPERTIES
  OUTPUT_NAME _core
  LIBRARY_OUTPUT_DIRECTORY ${ATTNPROP_PYTHON_DIR})
target_include_directories(attnprop_python PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(attnprop_python PRIVATE attnprop_core)
target_compile_definitions(attnprop_python PRIVATE
  ATTNPROP_MODELS_DIR="${PROJECT_SOURCE_DIR}/models"
  ATTNPROP_INSTALLED_MODELS_DIR="${CMAKE_INSTALL_FULL_DATADIR}/attnprop/models"
  ATTNPROP_BUILD_BINARY="$<TARGET_FILE:attnprop_cli>"
  ATTNPROP_INSTALLED_BINARY="${CMAKE_INSTALL_FULL_BINDIR}/attnprop")
attnprop_target_warnings(attnprop_python)
# The pure-Python part of the package, copied next to the extension at every build.
# Listed one by one (no glob): a new module file is added here.
set(_attnprop_python_sources
  ${PROJECT_SOURCE_DIR}/python/binding/attnprop/__init__.py)
set(_attnprop_python_copies)
foreach(_src ${_attnprop_python_sources})
  get_filename_component(_name ${_src} NAME)
  add_custom_command(OUTPUT ${ATTNPROP_PYTHON_DIR}/${_name}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${_src} ${ATTNPROP_PYTHON_DIR}/${_name}
    DEPENDS ${_src} VERBATIM)
  list(APPEND _attnprop_python_copies ${ATTNPROP_PYTHON_DIR}/${_name})
endforeach()
add_custom_target(attnprop_python_sources ALL DEPENDS ${_attnprop_python_copies})
add_dependencies(attnprop_python attnprop_python_sources)

install(TARGETS attnprop_python LIBRARY DESTINATION ${CMAKE_INSTALL_DATADIR}/attnprop/python/attnprop)
install(FILES ${_attnprop_python_sources} DESTINATION ${CMAKE_INSTALL_DATADIR}/attnprop/python/attnprop)
