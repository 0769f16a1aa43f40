"""Real-time differential IK (servo): one velocity QP per control period, no ROS."""
from ros2_ik.core.servo.step import Servo, ServoConfig, ServoStep
from ros2_ik.core.servo.whole_body import (
    Contact, WholeBodyConfig, WholeBodyServo, WholeBodyStep, support_polygon)

__all__ = ["Servo", "ServoConfig", "ServoStep", "Contact", "WholeBodyConfig",
           "WholeBodyServo", "WholeBodyStep", "support_polygon"]
