# Source me (bash): the environment every make target runs in.
# Nothing in a venv sets the ament/CMake prefix paths, so set them here, then overlay
# colcon's install space when it exists.
_ros2_ik_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export VIRTUAL_ENV="$_ros2_ik_root/.venv"
export PATH="$VIRTUAL_ENV/bin:$PATH"
export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$VIRTUAL_ENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export ROS_LOG_DIR="$_ros2_ik_root/log/ros"
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
export PYTHONDONTWRITEBYTECODE=1
if [[ -f "$_ros2_ik_root/install/setup.bash" ]]; then
  # colcon's setup scripts read unset variables: relax `set -u` while sourcing them.
  case $- in *u*) _ros2_ik_u=1; set +u ;; *) _ros2_ik_u= ;; esac
  # shellcheck disable=SC1091
  source "$_ros2_ik_root/install/setup.bash"
  [[ -n "$_ros2_ik_u" ]] && set -u
  unset _ros2_ik_u
fi
unset _ros2_ik_root
