# The allocator benchmark's nine workload classes, sourced by bench-allocator.sh and
# sim-rails.sh: ALL_CLASSES, and gen_args NAME printing the `laas-sim gen` arguments of one.
# name: gen arguments (the classes of the table)
ALL_CLASSES="exp8 exp32 exp128 exp324 gauss16 gauss100 gauss330 uni4-36 uni40-360"
gen_args() {
  case $1 in
    exp8) echo "--dist exp --mean 8" ;;
    exp32) echo "--dist exp --mean 32" ;;
    exp128) echo "--dist exp --mean 128" ;;
    exp324) echo "--dist exp --mean 324" ;;
    gauss16) echo "--dist gauss --mean 16" ;;
    gauss100) echo "--dist gauss --mean 100" ;;
    gauss330) echo "--dist gauss --mean 330" ;;
    uni4-36) echo "--dist uniform --mean 20" ;;
    uni40-360) echo "--dist uniform --mean 200" ;;
    *)
      echo "unknown class '$1' (known: $ALL_CLASSES)" >&2
      exit 2
      ;;
  esac
}
