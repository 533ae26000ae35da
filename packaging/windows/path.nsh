; Redraft's folder on the writer's own Path (HKCU\Environment), so that `redraft` runs in any new
; console: redraft.cmd (or the PyInstaller build's redraft.exe) lies in that folder. Included by
; redraft.nsi and by path-check.nsi, the test installer packaging/windows/wine-check runs under Wine.
; Needs APP defined: HKCU\Software\${APP} "AddedToPath" remembers that the installer added the folder,
; so the uninstaller never takes away an entry the writer made.
;
; NSIS strings hold ${NSIS_MAX_STRLEN} characters. ReadRegStr gives "" (and the error flag) for a longer
; value, and writing that back would wipe the writer's Path; so a Path too long to hold with the folder
; added is left exactly as it is, and the installer says how to add the folder by hand.

!include "LogicLib.nsh"
!include "WinMessages.nsh"
!include "StrFunc.nsh"
${StrLoc}
${UnStrRep}

; the longest Path (with two separators added around it) that a string can hold whole
!define /math REDRAFT_PATH_ROOM ${NSIS_MAX_STRLEN} - 4

; $R0: the Path value; $R1: "ok" (read whole), "none" (no Path value) or "long" (too long to hold)
!macro REDRAFT_READ_PATH un
Function ${un}RedraftReadPath
  ClearErrors
  ReadRegStr $R0 HKCU "Environment" "Path"
  ${IfNot} ${Errors}
    StrLen $R2 $R0
    StrCpy $R1 "ok"
    ${If} $R2 > ${REDRAFT_PATH_ROOM}
      StrCpy $R1 "long"
    ${EndIf}
    Return
  ${EndIf}
  ; An error: either no Path value, or one longer than a string (RegQueryValueEx: more data).
  StrCpy $R1 "none"
  StrCpy $R2 0
  ${Do}
    ClearErrors
    EnumRegValue $R3 HKCU "Environment" $R2
    ${If} ${Errors}
    ${OrIf} $R3 == ""
      ${Break}
    ${EndIf}
    ${If} $R3 == "Path"  ; StrCmp ignores case, as the registry does
      StrCpy $R1 "long"
      ${Break}
    ${EndIf}
    IntOp $R2 $R2 + 1
  ${Loop}
FunctionEnd
!macroend
!insertmacro REDRAFT_READ_PATH ""
!insertmacro REDRAFT_READ_PATH "un."

!macro REDRAFT_PATH_CHANGED
  ; open consoles keep their environment; Explorer and what it starts next read the new one
  SendMessage ${HWND_BROADCAST} ${WM_SETTINGCHANGE} 0 "STR:Environment" /TIMEOUT=5000
!macroend

Function RedraftAddToPath
  Call RedraftReadPath
  ${If} $R1 == "long"
    DetailPrint "Your Path is too long for this installer to change safely; it is left as it was."
    DetailPrint "To type redraft in a console, add $INSTDIR to it by hand."
    Return
  ${EndIf}
  StrLen $R2 $R0
  StrLen $R3 $INSTDIR
  IntOp $R2 $R2 + $R3
  ${If} $R2 > ${REDRAFT_PATH_ROOM}
    DetailPrint "Your Path is too long to take $INSTDIR as well; it is left as it was."
    Return
  ${EndIf}
  ${StrLoc} $R3 ";$R0;" ";$INSTDIR;" ">"
  ${If} $R3 != ""
    Return  ; already there: put there by an earlier install, or by the writer (then it stays theirs)
  ${EndIf}
  ${If} $R0 == ""
    StrCpy $R0 "$INSTDIR"
  ${Else}
    StrCpy $R3 $R0 1 -1
    ${If} $R3 == ";"
      StrCpy $R0 "$R0$INSTDIR"
    ${Else}
      StrCpy $R0 "$R0;$INSTDIR"
    ${EndIf}
  ${EndIf}
  WriteRegExpandStr HKCU "Environment" "Path" "$R0"
  WriteRegDWORD HKCU "Software\${APP}" "AddedToPath" 1
  DetailPrint "Added $INSTDIR to your Path: redraft runs in any new console."
  !insertmacro REDRAFT_PATH_CHANGED
FunctionEnd

; Takes out exactly the entry the installer added (call it before HKCU\Software\${APP} is deleted).
Function un.RedraftRemoveFromPath
  ClearErrors
  ReadRegDWORD $R4 HKCU "Software\${APP}" "AddedToPath"
  ${If} ${Errors}
  ${OrIf} $R4 != 1
    Return
  ${EndIf}
  Call un.RedraftReadPath
  ${If} $R1 == "long"
    DetailPrint "Your Path is too long to change safely: remove $INSTDIR from it by hand."
    Return
  ${ElseIf} $R1 == "none"
    Return
  ${EndIf}
  ${UnStrRep} $R2 ";$R0;" ";$INSTDIR;" ";"
  StrCpy $R2 $R2 "" 1  ; the separators added around it for the search
  StrCpy $R2 $R2 -1
  ${If} $R2 == $R0
    Return
  ${ElseIf} $R2 == ""
    DeleteRegValue HKCU "Environment" "Path"
  ${Else}
    WriteRegExpandStr HKCU "Environment" "Path" "$R2"
  ${EndIf}
  !insertmacro REDRAFT_PATH_CHANGED
FunctionEnd
