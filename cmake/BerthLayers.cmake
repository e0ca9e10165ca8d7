# The layers' link rules, checked once every target exists (at the end of
# the top-level CMakeLists.txt): configuring fails, naming the path, when a
# target reaches a library its layer must not. scripts/lint-layers.sh
# checks the same layers' #include lines.

# Fails the configuration if `target` links any of the FORBIDDEN libraries,
# directly or through other targets of ours, privately or not.
function(berth_forbid_links target)
  cmake_parse_arguments(ARG "" "" "FORBIDDEN" ${ARGN})
  set(queue ${target})
  set(seen ${target})
  string(MAKE_C_IDENTIFIER "${target}" key)
  set(path_${key} ${target})
  while(queue)
    list(POP_FRONT queue current)
    string(MAKE_C_IDENTIFIER "${current}" current_key)
    get_target_property(links ${current} LINK_LIBRARIES)
    get_target_property(interface ${current} INTERFACE_LINK_LIBRARIES)
    foreach(lib IN LISTS links interface)
      # A static library's private links reach its users as $<LINK_ONLY:lib>.
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
      if(NOT lib OR lib MATCHES "^\\$<" OR NOT TARGET "${lib}" OR "${lib}" IN_LIST seen)
        continue()
      endif()
      list(APPEND seen "${lib}")
      string(MAKE_C_IDENTIFIER "${lib}" key)
      set(path_${key} "${path_${current_key}} -> ${lib}")
      if("${lib}" IN_LIST ARG_FORBIDDEN)
        message(FATAL_ERROR "layers: ${target} must not link ${lib} (${path_${key}}); "
                            "docs/architecture.md has the layers")
      endif()
      # Third-party libraries link nothing of ours.
      get_target_property(imported "${lib}" IMPORTED)
      if(NOT imported)
        list(APPEND queue "${lib}")
      endif()
    endforeach()
  endwhile()
endfunction()
