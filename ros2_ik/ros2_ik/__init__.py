"""ros2_ik: inverse kinematics for ROS 2 on pinocchio."""
