"""What every cost type shares: its ``repr`` (see ``ros2_ik.core.terms``)."""
from ros2_ik.core.terms import Cost


class NamedCost(Cost):
    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
