"""Real-time differential IK (servo): one velocity QP per control period, no ROS."""
from ros2_ik.core.servo.step import Servo, ServoConfig, ServoStep

__all__ = ["Servo", "ServoConfig", "ServoStep"]
